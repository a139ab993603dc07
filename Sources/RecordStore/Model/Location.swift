/// A `LOCATION` field value: a coordinate, and what the device knew about it.
///
/// CloudKit Web Services Reference, "Types and Dictionaries" → Location Dictionary
/// (developer.apple.com/library/archive/…/CloudKitWebServicesReference/Types.html):
/// `latitude` and `longitude` are required; the others are optional. Angles in degrees,
/// distances in meters, speed in meters per second, `timestamp` in milliseconds since 1970.
public struct Location: Hashable, Sendable {
    public var latitude: Double
    public var longitude: Double
    public var horizontalAccuracy: Double?
    public var verticalAccuracy: Double?
    public var altitude: Double?
    public var speed: Double?
    public var course: Double?
    public var timestamp: Int64?

    public init(latitude: Double, longitude: Double, horizontalAccuracy: Double? = nil,
                verticalAccuracy: Double? = nil, altitude: Double? = nil, speed: Double? = nil,
                course: Double? = nil, timestamp: Int64? = nil) {
        self.latitude = latitude
        self.longitude = longitude
        self.horizontalAccuracy = horizontalAccuracy
        self.verticalAccuracy = verticalAccuracy
        self.altitude = altitude
        self.speed = speed
        self.course = course
        self.timestamp = timestamp
    }

    /// The optional measurements by their dictionary key, in the reference's order.
    public var measurements: [(key: String, value: Double?)] {
        [("horizontalAccuracy", horizontalAccuracy), ("verticalAccuracy", verticalAccuracy),
         ("altitude", altitude), ("speed", speed), ("course", course)]
    }

    /// Why this is not a coordinate on Earth, or nil: latitude within ±90°, longitude within
    /// ±180°, every number finite.
    var problem: String? {
        guard latitude.isFinite, abs(latitude) <= 90 else { return "latitude \(latitude) is not within ±90" }
        guard longitude.isFinite, abs(longitude) <= 180 else { return "longitude \(longitude) is not within ±180" }
        for (key, value) in measurements where value.map({ !$0.isFinite }) == true {
            return "\(key) is not a finite number"
        }
        return nil
    }
}
