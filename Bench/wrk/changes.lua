-- wrk script: every request fetches the whole change feed of room_feed (no token: every live record,
-- one page). Run with one connection, for the latency of changes/zone. The bearer token comes from
-- the environment (ZONERTC_TOKEN).
local token = os.getenv("ZONERTC_TOKEN")

request = function()
  return wrk.format("POST", "/database/1/iCloud.zonertc/development/private/changes/zone",
    {["Authorization"] = "Bearer " .. token, ["Content-Type"] = "application/json"},
    '{"zones":[{"zoneID":{"zoneName":"room_feed"}}]}')
end

local failures = 0
response = function(status, headers, body)
  if status ~= 200 or string.find(body, "serverErrorCode", 1, true) then failures = failures + 1 end
end

done = function(summary, latency, requests)
  if failures > 0 then io.write("wrk: " .. failures .. " failed requests\n") end
end
