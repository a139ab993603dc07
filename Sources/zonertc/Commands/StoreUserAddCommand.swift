import Foundation
import RecordStore
import StoreServer

/// `zonertc store user add`: creates a user in a data directory and prints its token.
enum StoreUserAddCommand {
    static let spec = CommandSpec(
        path: ["store", "user", "add"],
        summary: "Create a store user and print its bearer token (an existing user's token is printed again).",
        positionals: [("NAME", "the user record name (letters, digits, '_', '-', '.')")],
        options: [
            .value("--data", "DIR", "the store's data directory"),
            .value("--postgres", "URL", PostgresOption.help + " (a name there is taken once)"),
        ],
        discussion: """
            Give --data DIR or --postgres URL. Daemons running on them pick the new user up at its first request.
            """,
        run: run)

    static func run(_ args: ParsedCommand) async throws -> Int32 {
        guard let name = args.positionals.first else { throw UsageError(message: "give the user's NAME", command: spec) }
        switch (args.string("--data"), args.string("--postgres")) {
        case (let dir?, nil):
            // As `store serve --data DIR` does: a new store's directory is made, so users can be
            // added before the daemon first starts.
            do {
                try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            } catch {
                throw UserRegistry.RegistryError(
                    description: "cannot create the data directory \(dir): \(error.localizedDescription)")
            }
            print(try UserRegistry(directory: dir).add(name))
        case (nil, let url?):
            print(try await PostgresOption.addUser(name, url: url, spec: spec))
        case (nil, nil): throw UsageError(message: "give --data DIR or --postgres URL", command: spec)
        case (_?, _?): throw UsageError(message: "--data and --postgres exclude each other", command: spec)
        }
        return 0
    }
}
