-- wrk script: every request merges fields into an existing record of room_wrk (forceUpdate: only the
-- fields sent change). Each thread cycles over 32 records of its own, so after their first save every
-- request is a merge into a record holding more fields than it sends. The bearer token comes from the
-- environment (ZONERTC_TOKEN).
local token = os.getenv("ZONERTC_TOKEN")
local threads = {}
local counter = 0

function setup(thread)
  thread:set("tid", #threads + 1)
  table.insert(threads, thread)
end

request = function()
  counter = counter + 1
  local body = '{"zoneID":{"zoneName":"room_wrk"},"operations":[{"operationType":"forceUpdate","record":{'
    .. '"recordName":"U_' .. tid .. '_' .. (counter % 32) .. '","recordType":"SignalIceChunk","fields":{'
    .. '"f' .. (counter % 4) .. '":{"value":"candidate:1 1 udp 2122260223 127.0.0.1 5000 typ host","type":"STRING"},'
    .. '"seq":{"value":' .. counter .. ',"type":"INT64"}}}}]}'
  return wrk.format("POST", "/database/1/iCloud.zonertc/development/private/records/modify",
    {["Authorization"] = "Bearer " .. token, ["Content-Type"] = "application/json"}, body)
end

local failures = 0
response = function(status, headers, body)
  if status ~= 200 or string.find(body, "serverErrorCode", 1, true) then failures = failures + 1 end
end

done = function(summary, latency, requests)
  if failures > 0 then io.write("wrk: " .. failures .. " failed requests\n") end
end
