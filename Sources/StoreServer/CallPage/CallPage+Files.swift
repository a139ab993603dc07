// The call page's files, embedded from web/ by SwiftPM (Package.swift: `.embedInCode("CallPage/web")`),
// which generates `PackageResources` at build time: web/ is the only copy in the repository.

extension CallPage {
    /// The files of web/ by name, byte for byte (CallPageTests checks that every file of web/ is listed).
    static let files: [String: [UInt8]] = [
        "bandwidth.js": PackageResources.bandwidth_js,
        "call.css": PackageResources.call_css,
        "call.html": PackageResources.call_html,
        "call.js": PackageResources.call_js,
        "collector.js": PackageResources.collector_js,
        "epoch.js": PackageResources.epoch_js,
        "inbox.js": PackageResources.inbox_js,
        "leg.js": PackageResources.leg_js,
        "main.js": PackageResources.main_js,
        "mesh.js": PackageResources.mesh_js,
        "meshmain.js": PackageResources.meshmain_js,
        "meshpanel.js": PackageResources.meshpanel_js,
        "names.js": PackageResources.names_js,
        "offerrule.js": PackageResources.offerrule_js,
        "panel.js": PackageResources.panel_js,
        "presence.js": PackageResources.presence_js,
        "ranking.js": PackageResources.ranking_js,
        "records.js": PackageResources.records_js,
        "report.js": PackageResources.report_js,
        "room.js": PackageResources.room_js,
        "roster.js": PackageResources.roster_js,
        "routing.js": PackageResources.routing_js,
        "settle.js": PackageResources.settle_js,
        "signin.html": PackageResources.signin_html,
        "stats.js": PackageResources.stats_js,
        "store.js": PackageResources.store_js,
        "sync.js": PackageResources.sync_js,
        "token.js": PackageResources.token_js,
    ]
}
