import ZoneCore

/// One zone of a zones/lookup answer.
public enum ZoneLookupResult: Sendable, Hashable {
    /// The zone exists and the user may read it: its ID (owner resolved), whether operations on
    /// it are atomic (custom zones; not the default zone), and its change feed's current token
    /// (custom zones only: the default zone has none).
    case found(ZoneID, atomic: Bool, syncToken: ChangeToken?)
    /// The Zone Fetch Error Dictionary: `ZONE_NOT_FOUND`, or `ACCESS_DENIED` for another
    /// user's private zone.
    case failed(ZoneID, StoreError)
}

/// One zone of a zones/modify answer: what became of it and, for a saved custom zone, its change
/// feed's token.
public struct ZoneModifyAnswer: Sendable, Hashable {
    public var result: ZoneResult
    public var syncToken: ChangeToken?
}

extension StoreEngine {
    /// Zones by ID, as CloudKit Web Services Reference's "Fetching Zones by Identifier
    /// (zones/lookup)" has it (developer.apple.com/library/archive/…/CloudKitWebServicesReference/
    /// GettingZonesbyIdentifier.html): one result per zone asked, in the request's order.
    public mutating func lookupZones(_ ids: [ZoneID], scope: DatabaseScope,
                                     _ ctx: RequestContext) throws(StoreError) -> [ZoneLookupResult] {
        try admit(ctx, touchesZone: false)
        if ids.count > configuration.maxItemsPerRequest {
            throw StoreError(.limitExceeded,
                             "\(ids.count) zones in one lookup; the limit is \(configuration.maxItemsPerRequest)")
        }
        return ids.map { zoneDictionary($0, scope: scope, ctx) }
    }

    /// Every zone of the database with its Zone Dictionary, as "Fetching Zones (zones/list)" has it
    /// ("all the zones and their sync tokens", GettingAllZones.html): one request, however many zones.
    public mutating func listZoneDictionaries(scope: DatabaseScope,
                                              _ ctx: RequestContext) throws(StoreError) -> [ZoneLookupResult] {
        try admit(ctx, touchesZone: false)
        return try zoneIDs(scope: scope, ctx).map { zoneDictionary($0, scope: scope, ctx) }
    }

    /// zones/modify with each saved zone's Zone Dictionary ("Modifying Zones": a saved zone is
    /// answered with the Zone Dictionary's keys, `syncToken` among them): the results of
    /// `modifyZones`, each saved custom zone with its change feed's token, read in the same request.
    public mutating func modifyZonesAnswering(save: [ZoneID], delete: [ZoneID], scope: DatabaseScope,
                                              _ ctx: RequestContext) throws(StoreError) -> [ZoneModifyAnswer] {
        try modifyZones(save: save, delete: delete, scope: scope, ctx).map { result in
            guard case .saved(let id) = result, case .found(_, _, let token) = zoneDictionary(id, scope: scope, ctx)
            else { return ZoneModifyAnswer(result: result, syncToken: nil) }
            return ZoneModifyAnswer(result: result, syncToken: token)
        }
    }

    /// One zone's Zone Dictionary for `ctx`, or why it is refused.
    private func zoneDictionary(_ asked: ZoneID, scope: DatabaseScope, _ ctx: RequestContext) -> ZoneLookupResult {
        do throws(StoreError) {
            let id = try resolveZone(asked, scope: scope, access: .read, ctx)
            guard !id.isDefaultZone, let slot = state.zones.index(forKey: id) else {
                return .found(id, atomic: false, syncToken: nil)
            }
            let zone = state.zones.values[slot]
            let token = ChangeToken(.init(kind: .zone, owner: zone.tokenOwner, incarnation: zone.incarnation,
                                          sequence: zone.sequence, issuedAtMs: ctx.now.millisecondsSinceEpoch))
            return .found(id, atomic: true, syncToken: token)
        } catch {
            return .failed(asked, error)
        }
    }
}
