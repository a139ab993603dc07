import Foundation

/// An uploaded asset file as the store keeps it: the upload's `receipt` names it, `fileChecksum`
/// and `size` are what the upload step computed (CloudKit Web Services Reference, "Uploading Assets
/// (assets/upload)" → upload response; "Types and Dictionaries" → Asset Dictionary).
public struct StoredAsset: Sendable, Hashable {
    /// Unguessable (128 random bits, hex): the credential of the file, as the upload and download
    /// URLs are CloudKit's.
    public var receipt: String
    /// SHA-256 of the bytes, base64.
    public var fileChecksum: String
    public var size: Int64
    /// The user who uploaded it.
    public var owner: String

    public init(receipt: String, fileChecksum: String, size: Int64, owner: String) {
        self.receipt = receipt
        self.fileChecksum = fileChecksum
        self.size = size
        self.owner = owner
    }

    /// Whether `text` has the shape of a receipt (32 lowercase hex digits): anything else is not
    /// looked up, and never used in a file name.
    public static func isReceipt(_ text: String) -> Bool {
        text.utf8.count == 32 && text.utf8.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 102) }
    }

    /// A fresh receipt.
    public static func newReceipt() -> String {
        var g = SystemRandomNumberGenerator()
        return (0..<2).map { _ in
            let s = String(g.next() as UInt64, radix: 16)
            return String(repeating: "0", count: 16 - s.count) + s
        }.joined()
    }

    /// A fresh secret for `AssetStorage.signingKey`: 32 bytes from the system's random source.
    public static func newSigningKey() -> [UInt8] {
        var random = SystemRandomNumberGenerator()
        return (0..<32).map { _ in random.next() }
    }

    /// The checksum the store gives `bytes`.
    public static func checksum(of digest: [UInt8]) -> String { Data(digest).base64EncodedString() }
}

/// Where asset files are kept: files beside the journal (`AssetFiles`) or a PostgreSQL table.
/// `keep` returns only once the file and what describes it are durable, so an upload the client
/// was told about survives a crash.
public protocol AssetStorage: Sendable {
    /// Keeps `asset` with the bytes of the file at `path`, which it may move away. False, keeping
    /// nothing, when an asset is kept under its receipt already: an upload URL's receipt is derived
    /// from its token, so this is what makes a URL good for one upload on every daemon sharing the
    /// storage.
    @discardableResult
    func keep(_ asset: StoredAsset, fileAt path: String) async throws(StoreError) -> Bool
    /// Keeps `asset` with `bytes`; false, as above, when its receipt is taken.
    @discardableResult
    func keep(_ asset: StoredAsset, bytes: [UInt8]) async throws(StoreError) -> Bool
    /// The secret the asset URLs of this storage are signed with (`AssetURLSigner`): 32 random
    /// bytes made on first use and kept with the files, so every daemon sharing them, and the same
    /// daemon after a restart, accepts the URLs any of them handed out.
    func signingKey() async throws(StoreError) -> [UInt8]
    /// The asset kept under `receipt`, or nil.
    func asset(receipt: String) async throws(StoreError) -> StoredAsset?
    /// The asset kept under `receipt`, now counted as kept at `now` (so a removal of files kept
    /// before a cutoff older than `now` leaves it), or nil when it is gone. Atomic with
    /// `removeUnreferenced`: either the removal comes first and this answers nil, or this comes
    /// first and the removal leaves the file. A save into a record calls it for every receipt it
    /// holds before committing (`AssetReceipts.check`), so a file about to lapse is never removed
    /// under the record that takes it.
    func touch(receipt: String, now: Date) async throws(StoreError) -> StoredAsset?
    /// The bytes kept under `receipt`, or nil.
    func bytes(receipt: String) async throws(StoreError) -> [UInt8]?
    /// Removes the assets kept before `cutoff` whose receipt is not in `referenced`; how many.
    func removeUnreferenced(referenced: Set<String>, keptBefore cutoff: Date) async throws(StoreError) -> Int
}
