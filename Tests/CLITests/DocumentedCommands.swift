// How DocumentedCommandsTests runs each command line the documents show (README.md, CHANGELOG.md,
// docs/*.md: the lines of ```sh blocks). To show a new command in a document, add its exact line here
// (docs/TESTING.md "The documents are tested"). Every line also gets `DocumentedCommands.everywhere`: the
// test build's binaries for `swift run …` and `.build/…/zonertc`, $WORK (a directory of the test's own)
// for /tmp/, and free ports for fixed loopback ones; the Bench/ scripts and zonertc-bench run as smoke runs
// (ZONERTC_BENCH_QUICK=1, Bench/common.sh).
import TestSupport

/// How one documented command line is run.
struct DocumentedCommand: Sendable {
    enum Run: Sendable {
        /// Run as written.
        case asWritten
        /// Run with these replacements made first: the same command in a shorter form.
        case quick([Replacement])
        /// A line ending in `&` (a daemon): started in the background; the next line runs once its output
        /// shows this text (its ready line).
        case background(until: String)
        /// Not run here: the named test or CI step runs it (it needs a browser window or root, builds
        /// release binaries, or is the test command itself).
        case coveredBy(String)
        /// `swift test --filter X`: the suite runs X; here X is only checked to name tests.
        case testFilter

        var runsHere: Bool {
            switch self {
            case .asWritten, .quick, .background: true
            case .coveredBy, .testFilter: false
            }
        }
    }

    struct Replacement: Sendable {
        let from: String
        let to: String
    }

    /// A package trait the line needs; without it in this build the block is skipped.
    enum Trait: String, Sendable {
        case webRTC = "WebRTC"
        case postgreSQL = "PostgreSQL"

        var inThisBuild: Bool {
            switch self {
            case .webRTC:
                #if WebRTC
                true
                #else
                false
                #endif
            case .postgreSQL:
                #if PostgreSQL
                true
                #else
                false
                #endif
            }
        }
    }

    var run: Run
    /// Programs it needs (`python3:aiortc` for a Python module, `postgres-server` for PostgreSQL's
    /// server programs): without them the block is skipped, except under ZONERTC_CI=1 where it fails.
    var needs: [String] = []
    var trait: Trait?
    /// Texts the block's standard output must show.
    var expect: [String] = []
    /// The longest the block may take, in seconds.
    var limitSeconds = 60

    static let missing = DocumentedCommand(run: .coveredBy("no entry"))

    static let asWritten = DocumentedCommand(run: .asWritten)
    static let testFilter = DocumentedCommand(run: .testFilter)
    static func quick(_ replacements: (String, String)...) -> Self {
        Self(run: .quick(replacements.map { Replacement(from: $0.0, to: $0.1) }))
    }
    static func background(until text: String) -> Self { Self(run: .background(until: text)) }
    static func coveredBy(_ what: String) -> Self { Self(run: .coveredBy(what)) }

    func needing(_ programs: String...) -> Self { var c = self; c.needs += programs; return c }
    func with(_ trait: Trait) -> Self { var c = self; c.trait = trait; return c }
    func expecting(_ texts: String...) -> Self { var c = self; c.expect += texts; return c }
    func within(seconds: Int) -> Self { var c = self; c.limitSeconds = seconds; return c }

    /// Whether `need` (a program, `python3:MODULE` or `postgres-server`) is on this machine.
    static func isInstalled(_ need: String) -> Bool {
        if need == "postgres-server" { return PostgresCluster.binaries != nil }
        if need.hasPrefix("python3:") { return ExternalProgram.pythonHas(String(need.dropFirst(8))) }
        return ExternalProgram.path(need) != nil
    }
}

enum DocumentedCommands {
    /// Replacements (regular expression → template) made in every line that runs, after its own.
    static let everywhere: [(String, String)] = [
        (#"swift run( -c release)?( --traits [A-Za-z,]+)? zonertc-bench"#, "zonertc-bench"),
        (#"swift run( -c release)?( --traits [A-Za-z,]+)? zonertc"#, "zonertc"),
        (#"\.build/(release|debug)/zonertc"#, "zonertc"),
        (#"/tmp/"#, "\\$WORK/"),
    ]

    static let call = "OK: alice→bob 60 frames identical"

    static let entries: [(String, DocumentedCommand)] = [
        // README.md
        ("swift run zonertc call Fixtures/vp8-320x240-60.ivf", .asWritten.expecting(call)),
        ("bash .ci/install && swift test --no-parallel --traits WebRTC,PostgreSQL",
         .coveredBy(".ci/run: the test command itself")),
        ("swift run --traits WebRTC zonertc call Fixtures/vp8-320x240-60.ivf",
         .asWritten.with(.webRTC).expecting(call)),
        ("swift run zonertc call Fixtures/vp8-320x240-60.ivf --relay-only --impair loss=0.1,seed=1",
         .asWritten.expecting(call)),
        ("swift run -c release zonertc sim converge --strategies push,poll-token,hybrid,legacy --push-loss 0,0.2 "
            + "--nat none --trials 1000", .quick(("--trials 1000", "--trials 5")).expecting("trace hash:")),

        // docs/BENCHMARKS.md
        ("Bench/mesh-call.sh 5", .asWritten.expecting("ratio")),
        ("Bench/mesh-hops.sh 3", .asWritten.expecting("hop: another's commit until this member acted on it")),
        ("Bench/relay/compare.sh --rounds 2",
         .asWritten.needing("turnserver", "turnutils_uclient", "turnutils_peer", "iperf3").expecting("machine: ")),
        ("Bench/media-transfer.sh 3", .asWritten.needing("ffmpeg", "iperf3").expecting("identical")),
        ("ffmpeg -f lavfi -i \"testsrc2=size=1280x720:rate=30,noise=alls=30:allf=t\" -frames:v 150 -c:v libvpx "
            + "-b:v 200M -minrate 200M -maxrate 200M -bufsize 20M -deadline realtime -cpu-used 8 -g 30 "
            + "-lag-in-frames 0 -auto-alt-ref 0 -y /tmp/f-720p-noisy.ivf",
         .quick(("-frames:v 150", "-frames:v 3")).needing("ffmpeg")),
        ("zonertc call /tmp/f-720p-noisy.ivf --pace max --json --media-security dtls-srtp",
         .asWritten.with(.webRTC).needing("ffmpeg")),
        ("zonertc call /tmp/f-720p-noisy.ivf --pace max --json --media-security none", .asWritten.needing("ffmpeg")),
        ("zonertc bench call Fixtures/vp8-320x240-60.ivf --calls 20 --media-security dtls-srtp",
         .quick(("--calls 20", "--calls 1")).with(.webRTC).expecting("0 failed")),
        ("zonertc bench call Fixtures/vp8-320x240-60.ivf --calls 20 --media-security none",
         .quick(("--calls 20", "--calls 1")).expecting("0 failed")),
        ("python3 Bench/aiortc-call.py .build/release/zonertc Fixtures/vp8-320x240-60.ivf --runs 10",
         .quick(("--runs 10", "--runs 1")).needing("python3:aiortc")),
        ("swift run -c release --traits WebRTC zonertc-bench dtls", .asWritten.with(.webRTC).expecting("machine: ")),
        ("Bench/browser/browser-call.py --calls 10 --remote zonertc --zonertc .build/release/zonertc --timeout 20",
         .quick(("--calls 10", "--calls 1")).with(.webRTC).needing("chromium")),
        ("Bench/browser/browser-call.py --calls 10 --remote aiortc --zonertc .build/release/zonertc --timeout 20",
         .quick(("--calls 10", "--calls 1")).needing("chromium", "python3:aiortc")),
        ("zonertc sim converge --strategies hybrid --nat none --push-loss 0 --trials 10000",
         .quick(("--trials 10000", "--trials 20")).expecting("speed:")),
        ("Bench/sim/compare.sh --against 8c5ec2e --trials 10000", .asWritten.expecting("outputs identical")),
        ("Bench/postgres.sh", .asWritten.with(.postgreSQL).needing("postgres-server").expecting("machine: ")),
        ("swift run -c release zonertc-bench store", .asWritten),
        ("swift run -c release zonertc-bench http", .asWritten),
        ("Bench/http-saves.sh 5", .asWritten.needing("wrk", "curl").expecting("records in the store")),
        ("Bench/assets.sh", .asWritten.with(.postgreSQL).needing("python3").expecting("round trips")),
        // capacity.sh runs the three `bench load` lines after it with the same options (quick: 20 devices, 4
        // calls, 200 saves/s for 2 s), so they are checked in its output rather than started again.
        ("Bench/load/capacity.sh",
         .asWritten.with(.postgreSQL).expecting("machine: ", "errors         none", "4/4 converged, 0 failed",
                                                "0 shed; recovered").within(seconds: 240)),
        ("Bench/load/save-cost.sh --old /tmp/zonertc-before/zonertc",
         .quick(("--old /tmp/zonertc-before/zonertc", "--old \"$ZONERTC_BIN\"")).needing("cc").expecting("per save")),
        ("zonertc bench load --devices 10000 --hold 5s",
         .coveredBy("Bench/load/capacity.sh, in the same block, runs it (quick: --devices 20 --hold 1s)")),
        ("zonertc bench load --devices 0 --calls 1000 --call-hold 20s --lone-calls 20",
         .coveredBy("Bench/load/capacity.sh, in the same block, runs it (quick: --calls 4 --call-hold 1s "
                    + "--lone-calls 2)")),
        ("zonertc bench load --devices 2000 --bursts 0 --rate 4000 --duration 20s --request-connections 1024 "
            + "--max-requests-in-flight 256 --recover 10s",
         .coveredBy("Bench/load/capacity.sh, in the same block, runs it with the same options (quick: "
                    + "--devices 20 --rate 200 --duration 2s --recover 2s)")),
        ("zonertc bench signaling --profiles lan --calls 15", .quick(("--calls 15", "--calls 1"))),
        ("Bench/ice-connect/compare.sh", .asWritten.needing("python3:aioice")),
        ("swift run -c release zonertc-bench ice", .asWritten),
        ("swift run -c release zonertc-bench stun", .asWritten),
        ("swift run -c release zonertc-bench digests", .asWritten),
        ("swift run -c release --traits WebRTC,PostgreSQL zonertc-bench sha", .asWritten),

        // docs/CALL-PAGE.md
        ("zonertc store serve --data /tmp/zonertc-store",
         .coveredBy("BrowserCallTests: two browser pages call each other through such a daemon")),
        ("zonertc call Fixtures/vp8-320x240-60.ivf --browser",
         .coveredBy("BrowserPeerCallTests runs `zonertc call --browser` with headless Chromium")),
        ("ffmpeg -f lavfi -i testsrc=size=320x240:rate=30 -frames:v 60 -pix_fmt yuv420p -y /tmp/src.y4m",
         .asWritten.needing("ffmpeg")),
        ("zonertc call Fixtures/vp8-320x240-60.ivf --browser --browser-sends /tmp/src.y4m",
         .coveredBy("BrowserPeerCallTests runs `zonertc call --browser --browser-sends` with headless Chromium")),

        // docs/CLI.md
        ("zonertc media send Fixtures/vp8-320x240-60.ivf --to 127.0.0.1:5004 --seed 1 --sdp-out /tmp/s.sdp --sdp-only",
         .asWritten),
        ("zonertc media receive --sdp /tmp/s.sdp --record /tmp/out.ivf &", .background(until: "listening")),
        ("zonertc media send Fixtures/vp8-320x240-60.ivf --to 127.0.0.1:5004 --seed 1", .asWritten),
        ("wait", .quick(("wait", "wait \"${pids[0]}\""))),
        ("cmp /tmp/out.ivf Fixtures/vp8-320x240-60.ivf", .asWritten),

        // docs/GROUP-CALLS.md
        ("swift run zonertc call Fixtures/vp8-320x240-60.ivf --peers 3", .asWritten.expecting("OK: 6 directed streams")),
        ("zonertc call Fixtures/vp8-320x240-60.ivf --peers 5 --pace max --json",
         .quick(("--peers 5", "--peers 3")).expecting("directed streams")),
        ("zonertc call Fixtures/vp8-320x240-60.ivf --peers 4 --record /tmp/mesh-received",
         .quick(("--peers 4", "--peers 3 --pace max")).expecting("directed streams")),
        ("zonertc peer --store http://127.0.0.1:8080 --room room_abcd1234 --me alice --owner --token-file "
            + "/tmp/alice.token --send Fixtures/vp8-320x240-60.ivf --record /tmp/at-alice --peers 3",
         .coveredBy("MeshProcessTests runs group-call members without --remote against a daemon")),
        ("zonertc peer --store http://127.0.0.1:8080 --room room_abcd1234 --me bob --room-owner alice --token-file "
            + "/tmp/bob.token --send Fixtures/vp8-320x240-60.ivf --record /tmp/at-bob --peers 3",
         .coveredBy("MeshProcessTests runs group-call members without --remote against a daemon")),
        ("zonertc peer --store http://127.0.0.1:8080 --room room_abcd1234 --me carol --room-owner alice --token-file "
            + "/tmp/carol.token --send Fixtures/vp8-320x240-60.ivf --peers 3 --join-at 1764370800000",
         .coveredBy("MeshProcessTests.joinMoment runs --join-at's outcomes; every `zonertc call --peers N` joins so")),
        ("zonertc bench signaling --peers 5 --profiles lan,cloudkit --strategies push,hybrid --calls 10",
         .quick(("--peers 5 --profiles lan,cloudkit --strategies push,hybrid --calls 10",
                 "--peers 3 --profiles lan --strategies push --calls 1")).expecting("| 3 (mesh) | lan | push | 1 | 0 |")),
        ("zonertc call Fixtures/vp8-320x240-60.ivf --peers 2 --mesh",
         .coveredBy("MeshProcessTests.meshOfTwo runs `zonertc call --peers 2 --mesh`")),
        ("zonertc call Fixtures/vp8-320x240-60.ivf --peers 3 --relay-only",
         .coveredBy("MeshProcessTests.threePeersRelayed runs `zonertc call --peers 3 --relay-only` through our relay")),
        ("zonertc call Fixtures/vp8-320x240-60.ivf --browser --peers 3",
         .coveredBy("BrowserMeshCallCommandTests runs `zonertc call --browser --peers 3` with headless Chromium")),

        // docs/INTEROP.md
        ("swift test --filter InteropTests", .testFilter),
        ("swift test --filter RelayTests", .testFilter),
        ("swift test --filter AiortcSignalingTests", .testFilter),
        ("swift test --traits WebRTC --filter AiortcCallTests", .testFilter),
        ("swift test --filter BrowserCallTests", .testFilter),
        ("swift test --traits WebRTC --filter BrowserPeerCallTests", .testFilter),
        ("swift test --filter BrowserMeshTests", .testFilter),
        ("swift test --traits WebRTC --filter BrowserMeshPeerTests", .testFilter),
        ("chromium --user-data-dir=/tmp/zonertc-alice "
            + "'http://127.0.0.1:8470/call?room=room_abcd1234&me=alice&mesh=1&owner=1&peers=2'",
         .coveredBy("BrowserMeshTests: three headless Chromium pages make a group call (a browser window)")),
        ("chromium --user-data-dir=/tmp/zonertc-bob "
            + "'http://127.0.0.1:8470/call?room=room_abcd1234&me=bob&mesh=1&roomOwner=alice&peers=2'",
         .coveredBy("BrowserMeshTests: three headless Chromium pages make a group call (a browser window)")),
        ("chromium --user-data-dir=/tmp/zonertc-carol "
            + "'http://127.0.0.1:8470/call?room=room_abcd1234&me=carol&mesh=1&roomOwner=alice&peers=2'",
         .coveredBy("BrowserMeshTests: three headless Chromium pages make a group call (a browser window)")),
        ("swift test --traits WebRTC --filter DTLSTests", .testFilter),
        ("python3 Tests/Interop/dtls_capture.py .build/debug/zonertc Fixtures/vp8-320x240-60.ivf",
         .coveredBy(".ci/run's capture step (capturing on lo needs root or dumpcap's capabilities)")),
        ("swift test --filter MediaCommandTests", .testFilter),
        ("zonertc media receive --listen 127.0.0.1:5004 --record /tmp/in.ivf --frames 60 &",
         .background(until: "listening")),
        ("ffmpeg -re -i Fixtures/vp8-320x240-60.ivf -c copy -f rtp rtp://127.0.0.1:5004", .asWritten.needing("ffmpeg")),

        // docs/MEDIA.md
        ("swift test --filter MediaTests", .testFilter),
        ("swift test --traits WebRTC --filter PeerCallSecurityTests", .testFilter),

        // docs/POSTGRES.md: the cluster as the postgres user when the test runs as root
        ("swift build -c release --traits PostgreSQL", .coveredBy(".ci/run's release build with the traits")),
        ("PGDIR=$(mktemp -d); BIN=/usr/lib/postgresql/15/bin",
         .quick(("PGDIR=$(mktemp -d)",
                 "PGDIR=$(mktemp -d \"$WORK/pg.XXXXXX\"); [ -z \"$AS_POSTGRES\" ] || chown postgres: $PGDIR"))
            .with(.postgreSQL).needing("postgres-server").within(seconds: 90)),
        ("$BIN/initdb -D $PGDIR/data -A trust -U postgres", .quick(("$BIN/initdb", "$AS_POSTGRES $BIN/initdb"))),
        ("$BIN/pg_ctl -D $PGDIR/data -o \"-k $PGDIR -c listen_addresses=\" -l $PGDIR/log -w start",
         .quick(("$BIN/pg_ctl", "$AS_POSTGRES $BIN/pg_ctl"),
                ("-w start", "-w start; pids+=(\"$(head -1 $PGDIR/data/postmaster.pid)\")"))),
        ("$BIN/createdb -h $PGDIR -U postgres zonertc", .asWritten),
        ("URL=\"postgresql:///zonertc?host=$PGDIR&user=postgres\"", .asWritten),
        (".build/release/zonertc store serve --postgres \"$URL\" --listen 127.0.0.1:8471 &",
         .background(until: "listening")),
        (".build/release/zonertc store serve --postgres \"$URL\" --listen 127.0.0.1:8472 &",
         .background(until: "listening")),
        ("ALICE=$(.build/release/zonertc store user add alice --postgres \"$URL\")", .asWritten),
        ("BOB=$(.build/release/zonertc store user add bob --postgres \"$URL\")", .asWritten),
        (".build/release/zonertc peer --store http://127.0.0.1:8471 --token $ALICE --room room_pgcall01 --me alice "
            + "--remote bob --owner --send Fixtures/vp8-320x240-60.ivf --sync push &", .asWritten),
        (".build/release/zonertc peer --store http://127.0.0.1:8472 --token $BOB --room room_pgcall01 --me bob "
            + "--remote alice --record /tmp/bob.ivf --sync push", .asWritten.expecting("e1ab1dae9ea05856f5c4e1e2b2d39926")),
        (".build/release/zonertc store inspect --postgres \"$URL\"", .asWritten),
        ("kill %1 %2", .quick(("kill %1 %2", "kill \"${pids[@]}\""))),
        ("$BIN/pg_ctl -D $PGDIR/data stop", .quick(("$BIN/pg_ctl", "$AS_POSTGRES $BIN/pg_ctl"))),
        ("swift test --traits PostgreSQL --filter Postgres", .testFilter),

        // docs/SIGNALING.md
        ("swift test --filter StaleEpoch", .testFilter),
        ("swift test --filter LegacyComparisonTests", .testFilter),
        ("swift test --filter CallNegotiatorTests", .testFilter),

        // docs/SIMULATOR.md
        ("zonertc sim converge --peers 2 --push-loss 0 --trials 1000",
         .quick(("--trials 1000", "--trials 2")).expecting("trace hash:")),
        ("zonertc sim converge --peers 5 --trials 1000", .quick(("--trials 1000", "--trials 2")).expecting("trace hash:")),
        ("zonertc sim converge --peers 5 --join staggered:2s --trials 1000",
         .quick(("--trials 1000", "--trials 2")).expecting("trace hash:")),
        ("zonertc sim converge --peers 5 --join late --trials 1000",
         .quick(("--trials 1000", "--trials 2")).expecting("new epochs")),
        ("zonertc sim converge --peers 5 --throttle cloudkit --push-loss 0 --trials 1000",
         .quick(("--trials 1000", "--trials 2")).expecting("trace hash:")),
        ("zonertc sim converge --peers 5 --leave graceful --trials 1000",
         .quick(("--trials 1000", "--trials 2")).expecting("records left")),
        ("zonertc sim converge --peers 5 --leave crash --trials 1000",
         .quick(("--trials 1000", "--trials 1")).expecting("records left")),
        ("zonertc sim converge --strategies hybrid --push-loss 0,0.2 --nat none --trials 1000",
         .quick(("--trials 1000", "--trials 2")).expecting("trace hash:")),
        ("zonertc sim converge --strategies push,poll-token,poll-fullscan,hybrid,legacy --push-loss 0,0.2 --nat none "
            + "--profile cloudkit --trials 1000 --seed 42 --svg docs/sim-converge-cdf.svg --csv docs/sim-converge.csv",
         .quick(("--trials 1000", "--trials 5"), ("docs/sim-converge", "$WORK/sim-converge")).expecting("trace hash:")),
        ("zonertc sim converge --push-loss 0 --nat none --trials 1000 --seed 42 --hold 30s",
         .quick(("--trials 1000", "--trials 5"))),
        ("zonertc sim converge --strategies push,poll-token,poll-fullscan,hybrid,legacy --push-loss 0 --nat none "
            + "--old-epochs 3 --trials 1000 --seed 42", .quick(("--trials 1000", "--trials 5"))),

        // docs/STORE.md: the push stream runs "in a second terminal", here in the background
        ("zonertc store serve --data /tmp/zonertc-store --listen 127.0.0.1:8470 &", .background(until: "listening")),
        ("S=http://127.0.0.1:8470", .asWritten),
        ("TOKEN=$(curl -s -X POST $S/auth/register -d '{\"userName\":\"alice\"}' | python3 -c 'import json,sys; "
            + "print(json.load(sys.stdin)[\"token\"])')", .asWritten.needing("curl")),
        ("DB=$S/database/1/iCloud.zonertc/development/private", .asWritten),
        ("AUTH=\"Authorization: Bearer $TOKEN\"", .asWritten),
        ("curl -s -X POST $DB/zones/modify -H \"$AUTH\" -d '{\"operations\":[{\"operationType\":\"create\","
            + "\"zone\":{\"zoneID\":{\"zoneName\":\"room_abcd1234\"}}}]}'", .asWritten),
        ("curl -s -X POST $DB/subscriptions/modify -H \"$AUTH\" -d '{\"operations\":[{\"operationType\":\"create\","
            + "\"subscription\":{\"subscriptionID\":\"all\",\"subscriptionType\":\"database\"}}]}'", .asWritten),
        ("curl -N -H \"$AUTH\" -H \"X-Device-ID: laptop\" $S/database/1/iCloud.zonertc/development/push",
         .quick(("curl -N", "started ': ready' curl -sN"))),
        ("curl -s -X POST $DB/records/modify -H \"$AUTH\" -H \"X-Device-ID: phone\" -d '{\"zoneID\":{\"zoneName\":"
            + "\"room_abcd1234\"},\"operations\":[{\"operationType\":\"create\",\"record\":{\"recordName\":\"hello\","
            + "\"recordType\":\"Note\",\"fields\":{\"text\":{\"value\":\"hi\",\"type\":\"STRING\"}}}}]}'", .asWritten),
        ("curl -s -X POST $DB/changes/zone -H \"$AUTH\" -d '{\"zones\":[{\"zoneID\":{\"zoneName\":\"room_abcd1234\"}}]}'",
         .asWritten.expecting("hello")),
        ("swift test --filter RecordStoreTests", .testFilter),
        ("swift test --filter StoreServerTests", .testFilter),

        // docs/CLOUDKIT.md
        ("swift test --traits PostgreSQL --filter CloudKitConformanceTests", .testFilter),
        ("Bench/modify-compare.sh --old /tmp/zonertc-before/zonertc",
         .quick(("--old /tmp/zonertc-before/zonertc", "--old \"$ZONERTC_AGAINST_BIN\""))
            .with(.postgreSQL).needing("wrk", "curl", "postgres-server").expecting("medians over")),

        // docs/TESTING.md
        ("swift test --filter DocumentedCommandsTests", .testFilter),
        ("docs/gen-cli.sh", .quick(("docs/gen-cli.sh", "docs/gen-cli.sh --check \"$ZONERTC_BIN\""))
            .expecting("up to date")),
        ("bash Fuzz/run-fuzz.sh 60 STUN", .coveredBy(".ci/run's fuzz step (builds every target with AddressSanitizer)")),
        ("swift test --filter PeerCallRouteTests", .testFilter),
        ("swift test --filter CallProcessTests", .testFilter),
        ("swift test --filter SimConvergeTests", .testFilter),
    ]

    /// The entries by line, and the lines listed twice.
    struct Table: Sendable {
        var byText: [String: DocumentedCommand] = [:]
        var duplicates: [String] = []
    }

    static let table: Table = {
        var table = Table()
        for (text, command) in entries {
            if table.byText[text] != nil { table.duplicates.append(text) }
            table.byText[text] = command
        }
        return table
    }()
}
