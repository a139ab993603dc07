import ZoneCore
