// libFuzzer entry point for the store's JSON wire format: arbitrary bytes parsed as a request body,
// then every decoder a request reaches (records, fields, zone IDs, subscriptions, shares, errors,
// notifications); a record that decodes is encoded and decoded again. A trap here is a bug: a hostile
// body must only ever be refused with a thrown error (400 BAD_REQUEST).
//
// Built by Fuzz/run-fuzz.sh from the modules listed in `modules`; libFuzzer supplies `main`.
import Foundation
import RecordStore
import StoreServer
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
        _ = try? WireFormat.decodeZoneID(candidate)
        _ = try? WireFormat.decodeSubscription(candidate)
        if let o = candidate as? WireFormat.Object {
            _ = try? WireFormat.decodeShare(o)
            _ = WireFormat.decodeError(o)
            _ = WireFormat.decodeNotification(o)
            for (name, value) in (o["fields"] as? WireFormat.Object) ?? [:] {
                _ = try? WireFormat.decodeField(value, name: name)
            }
        }
    }
    return 0
}
