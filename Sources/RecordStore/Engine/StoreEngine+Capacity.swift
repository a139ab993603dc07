extension StoreEngine {
    /// Makes room in every zone for `records` more records and change-feed entries than it holds,
    /// so that writing them rehashes nothing. Changes no content.
    ///
    /// An engine copied as the starting point of many runs (the simulator's trial scene) otherwise
    /// hands every copy tables exactly as full as the set-up left them: each run's first write to a
    /// zone then copied and rehashed its records and feed, where with room it only copies them.
    public mutating func reserveCapacity(recordsPerZone records: Int) {
        // By position, in place: iterating the zones would hold the dictionary and so copy it.
        var at = state.zones.startIndex
        while at != state.zones.endIndex {
            state.zones.values[at].reserveCapacity(records: records)
            state.zones.formIndex(after: &at)
        }
    }
}

extension ZoneState {
    /// Room for `extra` more records and feed keys.
    mutating func reserveCapacity(records extra: Int) {
        records.reserveCapacity(records.count + extra)
        log.reserveCapacity(extra)
    }
}
