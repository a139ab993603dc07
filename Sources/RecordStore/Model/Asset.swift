/// An `ASSET`/`ASSETID` field value: the asset dictionary a record holds for a file stored beside it.
///
/// CloudKit Web Services Reference, "Types and Dictionaries" → Asset Dictionary
/// (developer.apple.com/library/archive/…/CloudKitWebServicesReference/Types.html).
/// The store keeps the dictionary as written; the file itself comes through `assets/upload`
/// ("Uploading Assets", StoreServer's StoreAPI+Assets.swift), whose `receipt` names it.
public struct Asset: Hashable, Sendable {
    /// How the field's type was spelled on the wire; it is written back the same way.
    public enum Spelling: String, Hashable, Sendable, CaseIterable {
        case asset = "ASSET"
        case assetID = "ASSETID"
    }

    /// Data Size Limits: "Maximum file size of an Asset field: 50 MB".
    public static let maxFileSize: Int64 = 50 * 1024 * 1024

    public var spelling: Spelling
    /// The file's signature from the upload step.
    public var fileChecksum: String
    /// The file's size in bytes.
    public var size: Int64
    public var referenceChecksum: String?
    public var wrappingKey: String?
    public var receipt: String?
    /// Where the file can be fetched; present when a record is fetched.
    public var downloadURL: String?

    public init(spelling: Spelling = .assetID, fileChecksum: String, size: Int64, referenceChecksum: String? = nil,
                wrappingKey: String? = nil, receipt: String? = nil, downloadURL: String? = nil) {
        self.spelling = spelling
        self.fileChecksum = fileChecksum
        self.size = size
        self.referenceChecksum = referenceChecksum
        self.wrappingKey = wrappingKey
        self.receipt = receipt
        self.downloadURL = downloadURL
    }

    /// The optional strings by their dictionary key, in the reference's order.
    public var strings: [(key: String, value: String?)] {
        [("referenceChecksum", referenceChecksum), ("wrappingKey", wrappingKey), ("receipt", receipt),
         ("downloadURL", downloadURL)]
    }

    /// Bytes of the dictionary as the record stores it (the file is not in the record).
    var dataSize: Int {
        strings.reduce(fileChecksum.utf8.count + 8) { $0 + ($1.value?.utf8.count ?? 0) }
    }

    /// Why this dictionary cannot be saved, or nil.
    var problem: String? {
        if fileChecksum.isEmpty { return "an asset needs its fileChecksum" }
        if size < 0 { return "an asset's size \(size) is negative" }
        if size > Self.maxFileSize {
            return "an asset of \(size) bytes is over the limit of \(Self.maxFileSize) bytes (50 MB)"
        }
        return nil
    }
}
