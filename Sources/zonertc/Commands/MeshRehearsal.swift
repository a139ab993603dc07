import Foundation
import Media
import Peer
import Signaling
import Simulation

/// A prepared member's rehearsal (`--join-at`): a group call of two run in memory on a virtual clock (the
/// simulator's: `RoomTrial`, its store and network in memory) before joining — the room's signaling, the
/// change-sync, the offer/answer and candidate machines, SDP, ICE and STUN, DTLS-SRTP with this process's
/// certificate and a few frames of the file each way: the same code the real legs run.
/// A process runs a code path slower the first time: the Swift runtime instantiates generic type metadata and
/// looks up protocol conformances on first use, the dynamic linker binds each C function on its first call,
/// and every code and data page is faulted in. On a shared machine a group call's join is CPU-bound (every
/// member and the daemon compete for the cores), so these one-time costs, paid in the window between the join
/// and the last first frame, lengthen it for every member. A real app's process is warm long before its
/// call; this makes a `zonertc peer` so too. It sends and stores nothing outside the process, and its outcome
/// is not used. `ZONERTC_PEER_REHEARSAL=0` turns it off (to measure what it saves).
enum MeshRehearsal {
    /// Frames of the file each rehearsing member sends: enough for a keyframe and the frames after it.
    static let frames = 3

    static func start(signaling: SignalingConfiguration, security: MediaProtectionMode, pace: MediaSender.Pace,
                      file: Task<Result<(format: VideoStreamFormat, frames: [VideoFrame]), VideoFileError>, Never>?)
        -> Task<Void, Never>? {
        guard ProcessInfo.processInfo.environment["ZONERTC_PEER_REHEARSAL"] != "0" else { return nil }
        return Task.detached(priority: .userInitiated) {
            // After the DTLS warm-up (libsrtp2's and NSS's start-up are made once, on its thread).
            await security.warmedUp()
            var media = CallMediaConfiguration(receive: true, pace: pace)
            if case .success(let (format, frames))? = await file?.value, !frames.isEmpty {
                media.send = .init(format: format, frames: Array(frames.prefix(Self.frames)))
            }
            run(signaling: signaling, media: media, security: security)
        }
    }

    /// Runs the in-memory call: until both members are connected and a virtual second more for DTLS and
    /// the media (the trial's own deadline bounds it).
    static func run(signaling: SignalingConfiguration, media: CallMediaConfiguration, security: MediaProtectionMode) {
        let configuration = TrialConfiguration(signaling: signaling, push: .lan, storeLatency: StoreLatencyProfile.lan,
                                               deadline: .seconds(60))
        do {
            var trial = try RoomTrial(configuration: configuration, members: 2, join: .simultaneous, index: 0, seed: 1,
                                      media: media, mediaSecurity: security)
            trial.holdFor = .seconds(1)
            _ = trial.run()
        } catch {}
    }
}
