import Foundation
import Synchronization

/// What encoding one request's answer needs besides the request itself — the host it named (share
/// and asset URLs), the user it is answered for (a share's `currentUserParticipant`) and the signer
/// of its `downloadURL`s — bound once per request as one task-local value, where the record
/// encoders deep inside the answer read it.
struct RequestScope: Sendable {
    var host: String?
    var user: String?
    var assetSigning: AssetURLSigner?
}

/// The asset URL signer, made once: at daemon start (`StoreAPI.prepareAssetSigning`) or by the
/// first request that needs it. Read without a lock on every request afterwards.
final class AssetSignerSlot: Sendable {
    private final class Box: Sendable {
        let signer: AssetURLSigner
        init(_ signer: AssetURLSigner) { self.signer = signer }
    }

    private let slot = AtomicLazyReference<Box>()

    var signer: AssetURLSigner? { slot.load()?.signer }

    /// Keeps `signer` unless one is kept already; the one kept.
    func keep(_ signer: AssetURLSigner) -> AssetURLSigner { slot.storeIfNil(Box(signer)).signer }
}

extension StoreAPI {
    /// The scope of the request being answered.
    @TaskLocal static var requestScope = RequestScope()

    /// The host a request named (its `Host` header), for the share and asset URLs it is answered with.
    static var requestHost: String? { requestScope.host }

    /// The user a request is answered for, so that a share record says who they are in it
    /// (`currentUserParticipant`) wherever records are encoded.
    static var requestUser: String? { requestScope.user }

    /// The signer of the request being answered, which the download URLs in its answer are signed with.
    static var assetSigning: AssetURLSigner? { requestScope.assetSigning }
}
