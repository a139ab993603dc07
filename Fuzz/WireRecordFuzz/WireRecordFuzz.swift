// libFuzzer entry point for the store's JSON wire format: arbitrary bytes parsed as a request body,
// then every decoder a request reaches (record dictionaries as a request and as a response carries
// them, every field type — locations, assets, references with their actions, lists — zone IDs,
// subscriptions, shares, errors, notifications); a record that decodes is encoded and decoded again,
// and must come back the same. A trap here is a bug: a hostile body must only ever be refused with a
// thrown error (400 BAD_REQUEST).
//
// Built by Fuzz/run-fuzz.sh from the modules listed in `modules`; libFuzzer supplies `main`.
import Foundation
import RecordStore
@testable import StoreServer
import ZoneCore

@_cdecl("LLVMFuzzerTestOneInput")
public func wireRecordFuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = Array(UnsafeRawBufferPointer(start: data, count: size))
    guard let object = try? WireFormat.parseObject(bytes) else { return 0 }
    let zone = ZoneID(zoneName: "room_fuzz")
    // The shapes requests carry: a record, or a list of them under operations/records.
    var candidates: [Any?] = [object, object["record"], object["zoneID"], object["subscription"]]
    for key in ["operations", "records", "zones"] {
        for item in object[key] as? [WireFormat.Object] ?? [] { candidates += [item, item["record"], item["zoneID"]] }
    }
    for candidate in candidates {
        if let record = try? WireFormat.decodeRecord(candidate, defaultZone: zone) {
            // What decoded encodes, and the encoding decodes again with the same name and type.
            let again = try? WireFormat.decodeRecord(
                WireFormat.parseObject(WireFormat.serialize(WireFormat.encode(record))), defaultZone: zone)
            precondition(again?.id == record.id && again?.recordType == record.recordType,
                         "a decoded record does not survive its own encoding")
        }
        if let o = candidate as? WireFormat.Object {
            // As a records/modify operation reads it: strictly, then saved and answered.
            for forDelete in [false, true] {
                guard let sent = try? WireFormat.decodeRequestRecord(WireObject(o), zone: zone, forDelete: forDelete,
                                                                     newName: { "named-by-server" }) else { continue }
                let answered = WireFormat.serialize(WireFormat.encode(sent.record, RecordRendering.all))
                let back = try? WireFormat.decodeRecord(WireFormat.parseObject(answered), defaultZone: zone)
                precondition(back?.fields == sent.record.fields || sent.record.fields.contains { $0.value.hasNaN },
                             "a record's fields do not survive their own encoding")
                _ = WireFormat.encode(sent.record, RecordRendering(desiredKeys: ["a"], numbersAsStrings: true))
            }
            _ = try? WireFormat.decodeShare(o)
            _ = WireFormat.decodeError(o)
            _ = WireFormat.decodeNotification(o)
            for (name, value) in (o["fields"] as? WireFormat.Object) ?? [:] {
                if let field = try? WireFormat.decodeField(value, name: name, zone: zone) {
                    // Every value a field decodes to encodes, with numbers as strings too, and reads back.
                    for asStrings in [false, true] {
                        let encoded = WireFormat.encodeField(field, numbersAsStrings: asStrings)
                        let reread = try? WireFormat.decodeField(
                            WireFormat.parseObject(WireFormat.serialize(["f": encoded]))["f"] as Any, name: name,
                            zone: zone)
                        precondition(reread == field || field.hasNaN, "field \(name) does not survive its encoding")
                    }
                }
            }
        }
        _ = try? WireFormat.decodeZoneID(candidate)
        _ = try? WireFormat.decodeSubscription(candidate)
    }
    return 0
}

private extension FieldValue {
    /// NaN is unequal to itself: a value holding one cannot be compared after a round trip.
    var hasNaN: Bool {
        switch self {
        case .double(let d): d.isNaN
        case .location(let l): l.latitude.isNaN || l.longitude.isNaN
        case .list(let items): items.contains { $0.hasNaN }
        default: false
        }
    }
}
