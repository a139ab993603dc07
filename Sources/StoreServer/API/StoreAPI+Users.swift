import RecordStore

extension StoreAPI {
    /// `GET …/public/users/current` — CloudKit Web Services Reference, "Fetching Current User
    /// (users/current)" (developer.apple.com/library/archive/documentation/DataManagement/Conceptual/
    /// CloudKitWebServicesReference/GetCurrentUser.html): the signed-in user's User dictionary.
    ///
    /// The dictionary holds `userRecordName`; `firstName` and `lastName` are left out, as Apple's
    /// page does for a user who is not discoverable: the daemon knows no one's name but the user
    /// name. The other `users/*` endpoints (discover, lookup, caller) are `404 NOT_FOUND`.
    func users(_ operation: String, _ request: HTTPRequest, identity: RequestIdentity) -> HTTPResponse {
        guard operation == "current" else {
            return error(404, .unknownItem,
                         "no operation 'users/\(operation)' (docs/CLOUDKIT.md lists the ones served)")
        }
        guard request.method == "GET" else { return error(405, .invalidArguments, "users/current is GET") }
        guard let user = identity.userName else { return signInRequired(request) }
        return .json(200, WireFormat.serialize(["userRecordName": user]))
    }
}
