import StoreServer

/// `zonertc store user add`: creates a user in a data directory and prints its token.
enum StoreUserAddCommand {
    static let spec = CommandSpec(
        path: ["store", "user", "add"],
        summary: "Create a store user and print its bearer token (an existing user's token is printed again).",
        positionals: [("NAME", "the user record name (letters, digits, '_', '-', '.')")],
        options: [.value("--data", "DIR", "(required) the store's data directory")],
        discussion: "A daemon running on DIR picks the new user up at its first request.",
        run: run)

    static func run(_ args: ParsedCommand) async throws -> Int32 {
        guard let name = args.positionals.first else { throw UsageError(message: "give the user's NAME", command: spec) }
        let dir = try args.required("--data")
        let users = try UserRegistry(directory: dir)
        print(try users.add(name))
        return 0
    }
}
