-- wrk script: every request saves one new SignalIceChunk record (a durable write) to room_wrk.
-- The bearer token comes from the environment (ZONERTC_TOKEN); names are unique per thread.
local token = os.getenv("ZONERTC_TOKEN")
local threads = {}
local counter = 0

function setup(thread)
  thread:set("tid", #threads + 1)
  table.insert(threads, thread)
end

request = function()
  counter = counter + 1
  local body = '{"zoneID":{"zoneName":"room_wrk"},"operations":[{"operationType":"create","record":{'
    .. '"recordName":"IC_' .. tid .. '_' .. counter .. '","recordType":"SignalIceChunk","fields":{'
    .. '"candidate":{"value":"candidate:1 1 udp 2122260223 127.0.0.1 5000 typ host","type":"STRING"},'
    .. '"seq":{"value":' .. counter .. ',"type":"INT64"}}}}]}'
  return wrk.format("POST", "/database/1/iCloud.zonertc/development/private/records/modify",
    {["Authorization"] = "Bearer " .. token, ["Content-Type"] = "application/json"}, body)
end

local failures = 0
response = function(status, headers, body)
  if status ~= 200 or string.find(body, "serverErrorCode", 1, true) then failures = failures + 1 end
end
