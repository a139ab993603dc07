// Session descriptions in the shape Chrome, Firefox and aiortc emit them. The text is ours
// (addresses from the documentation ranges, random identifiers), modelled line by line on
// what those stacks write: their attribute order, their quirks (Chrome's "msid-semantic: WMS",
// Firefox's upper-case "UDP" and session-level fingerprint, aiortc's real c= address and
// several fingerprints), and the lines a silent video call must ignore (audio, data channels,
// extmap, ssrc, msid, rid, simulcast, b=AS).

enum Fixtures {
    /// Joins lines with CRLF, the line ending browsers use, with a final CRLF.
    static func crlf(_ lines: String) -> String {
        lines.split(separator: "\n", omittingEmptySubsequences: false)
            .map(String.init).filter { !$0.isEmpty }.map { $0 + "\r\n" }.joined()
    }

    /// Chrome (unified plan): audio, simulcast video (send only) and a data channel, bundled;
    /// mDNS host candidates in the first section; ICE and DTLS attributes in every section.
    static let chromeOffer = crlf(
        """
        v=0
        o=- 4772484948258786213 2 IN IP4 127.0.0.1
        s=-
        t=0 0
        a=group:BUNDLE 0 1 2
        a=extmap-allow-mixed
        a=msid-semantic: WMS 15fc899e-4fd5-4dbe-bbdc-968b7afb2c68
        m=audio 9 UDP/TLS/RTP/SAVPF 111 63 9 0 8 13 110 126
        c=IN IP4 0.0.0.0
        a=rtcp:9 IN IP4 0.0.0.0
        a=candidate:2999745851 1 udp 2122260223 57b6fb7e-bfea-4155-9a28-f7b324e4e25a.local 54321 typ host generation \
        0 network-id 1 network-cost 10
        a=candidate:1677313431 1 udp 1686052607 203.0.113.45 54321 typ srflx raddr 0.0.0.0 rport 0 generation 0 \
        network-id 1 network-cost 10
        a=candidate:4233069003 1 tcp 1518280447 57b6fb7e-bfea-4155-9a28-f7b324e4e25a.local 9 typ host tcptype active \
        generation 0 network-id 1 network-cost 10
        a=ice-ufrag:dMlH
        a=ice-pwd:UvTCQCyEZDz/TddJ8HyS5SUk
        a=ice-options:trickle
        a=fingerprint:sha-256 A5:4D:CA:18:25:30:BB:1D:6D:13:2C:DE:D6:23:7B:2E:D9:1E:3F:72:1F:CB:19:71:17:44:94:D6:49:\
        3C:9D:5C
        a=setup:actpass
        a=mid:0
        a=extmap:1 urn:ietf:params:rtp-hdrext:ssrc-audio-level
        a=extmap:2 http://www.webrtc.org/experiments/rtp-hdrext/abs-send-time
        a=extmap:3 http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01
        a=extmap:4 urn:ietf:params:rtp-hdrext:sdes:mid
        a=sendrecv
        a=msid:15fc899e-4fd5-4dbe-bbdc-968b7afb2c68 d42fddbb-7a86-47a2-83c7-1b9abd87a865
        a=rtcp-mux
        a=rtcp-rsize
        a=rtpmap:111 opus/48000/2
        a=rtcp-fb:111 transport-cc
        a=fmtp:111 minptime=10;useinbandfec=1
        a=rtpmap:63 red/48000/2
        a=fmtp:63 111/111
        a=rtpmap:9 G722/8000
        a=rtpmap:0 PCMU/8000
        a=rtpmap:8 PCMA/8000
        a=rtpmap:13 CN/8000
        a=rtpmap:110 telephone-event/48000
        a=rtpmap:126 telephone-event/8000
        a=ssrc:3735928559 cname:Qx9cF2kLmN4pR7sT
        a=ssrc:3735928559 msid:15fc899e-4fd5-4dbe-bbdc-968b7afb2c68 d42fddbb-7a86-47a2-83c7-1b9abd87a865
        m=video 9 UDP/TLS/RTP/SAVPF 96 97 102 103 106 107 98 99 45 46 116 117 118
        c=IN IP4 0.0.0.0
        b=AS:2500
        a=rtcp:9 IN IP4 0.0.0.0
        a=ice-ufrag:dMlH
        a=ice-pwd:UvTCQCyEZDz/TddJ8HyS5SUk
        a=ice-options:trickle
        a=fingerprint:sha-256 A5:4D:CA:18:25:30:BB:1D:6D:13:2C:DE:D6:23:7B:2E:D9:1E:3F:72:1F:CB:19:71:17:44:94:D6:49:\
        3C:9D:5C
        a=setup:actpass
        a=mid:1
        a=extmap:14 urn:ietf:params:rtp-hdrext:toffset
        a=extmap:2 http://www.webrtc.org/experiments/rtp-hdrext/abs-send-time
        a=extmap:13 urn:3gpp:video-orientation
        a=extmap:3 http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01
        a=extmap:5 http://www.webrtc.org/experiments/rtp-hdrext/playout-delay
        a=extmap:4 urn:ietf:params:rtp-hdrext:sdes:mid
        a=extmap:10 urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id
        a=extmap:11 urn:ietf:params:rtp-hdrext:sdes:repaired-rtp-stream-id
        a=sendonly
        a=msid:15fc899e-4fd5-4dbe-bbdc-968b7afb2c68 05e999f3-842e-4fc2-a954-0a6eb12aa1f6
        a=rtcp-mux
        a=rtcp-rsize
        a=rtpmap:96 VP8/90000
        a=rtcp-fb:96 goog-remb
        a=rtcp-fb:96 transport-cc
        a=rtcp-fb:96 ccm fir
        a=rtcp-fb:96 nack
        a=rtcp-fb:96 nack pli
        a=rtpmap:97 rtx/90000
        a=fmtp:97 apt=96
        a=rtpmap:102 H264/90000
        a=rtcp-fb:102 goog-remb
        a=rtcp-fb:102 transport-cc
        a=rtcp-fb:102 ccm fir
        a=rtcp-fb:102 nack
        a=rtcp-fb:102 nack pli
        a=fmtp:102 level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42001f
        a=rtpmap:103 rtx/90000
        a=fmtp:103 apt=102
        a=rtpmap:106 H264/90000
        a=rtcp-fb:106 goog-remb
        a=rtcp-fb:106 transport-cc
        a=rtcp-fb:106 ccm fir
        a=rtcp-fb:106 nack
        a=rtcp-fb:106 nack pli
        a=fmtp:106 level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42e01f
        a=rtpmap:107 rtx/90000
        a=fmtp:107 apt=106
        a=rtpmap:98 VP9/90000
        a=rtcp-fb:98 goog-remb
        a=rtcp-fb:98 transport-cc
        a=rtcp-fb:98 ccm fir
        a=rtcp-fb:98 nack
        a=rtcp-fb:98 nack pli
        a=fmtp:98 profile-id=0
        a=rtpmap:99 rtx/90000
        a=fmtp:99 apt=98
        a=rtpmap:45 AV1/90000
        a=rtcp-fb:45 goog-remb
        a=rtcp-fb:45 transport-cc
        a=rtcp-fb:45 ccm fir
        a=rtcp-fb:45 nack
        a=rtcp-fb:45 nack pli
        a=fmtp:45 level-idx=5;profile=0;tier=0
        a=rtpmap:46 rtx/90000
        a=fmtp:46 apt=45
        a=rtpmap:116 red/90000
        a=rtpmap:117 rtx/90000
        a=fmtp:117 apt=116
        a=rtpmap:118 ulpfec/90000
        a=rid:h send
        a=rid:m send
        a=rid:l send
        a=simulcast:send h;m;l
        m=application 9 UDP/DTLS/SCTP webrtc-datachannel
        c=IN IP4 0.0.0.0
        a=ice-ufrag:dMlH
        a=ice-pwd:UvTCQCyEZDz/TddJ8HyS5SUk
        a=ice-options:trickle
        a=fingerprint:sha-256 A5:4D:CA:18:25:30:BB:1D:6D:13:2C:DE:D6:23:7B:2E:D9:1E:3F:72:1F:CB:19:71:17:44:94:D6:49:\
        3C:9D:5C
        a=setup:actpass
        a=mid:2
        a=sctp-port:5000
        a=max-message-size:262144
        """)

    /// Firefox: fingerprint and ice-options at session level, attributes in alphabetical order,
    /// upper-case "UDP"/"TCP", candidates only in the first bundled section, end-of-candidates.
    static let firefoxOffer = crlf(
        """
        v=0
        o=mozilla...THIS_IS_SDPARTA-128.0 2725083153432162128 0 IN IP4 0.0.0.0
        s=-
        t=0 0
        a=fingerprint:sha-256 34:60:BE:31:20:1E:69:FE:DA:A0:EE:E8:B9:99:7F:5C:7C:29:99:FD:AF:E5:93:25:3C:D6:54:AF:4D:\
        FA:D7:14
        a=group:BUNDLE 0 1
        a=ice-options:trickle
        a=msid-semantic:WMS *
        m=audio 9 UDP/TLS/RTP/SAVPF 109 9 0 8 101
        c=IN IP4 0.0.0.0
        a=candidate:0 1 UDP 2122252543 873be078-f3b7-450d-b373-ca533488f876.local 61874 typ host
        a=candidate:2 1 TCP 2105524479 873be078-f3b7-450d-b373-ca533488f876.local 9 typ host tcptype active
        a=candidate:1 1 UDP 1686052863 198.51.100.23 61874 typ srflx raddr 0.0.0.0 rport 0
        a=sendrecv
        a=end-of-candidates
        a=extmap:1 urn:ietf:params:rtp-hdrext:ssrc-audio-level
        a=extmap:2/recvonly urn:ietf:params:rtp-hdrext:csrc-audio-level
        a=extmap:3 urn:ietf:params:rtp-hdrext:sdes:mid
        a=fmtp:109 maxplaybackrate=48000;stereo=1;useinbandfec=1
        a=fmtp:101 0-15
        a=ice-pwd:1af3176813e02ea68ef786e4d3cea27d
        a=ice-ufrag:26934b48
        a=mid:0
        a=msid:{8b0d590b-b0a8-44e5-a587-be6b5c9bcf35} {d42fddbb-7a86-47a2-83c7-1b9abd87a865}
        a=rtcp-mux
        a=rtpmap:109 opus/48000/2
        a=rtpmap:9 G722/8000/1
        a=rtpmap:0 PCMU/8000
        a=rtpmap:8 PCMA/8000
        a=rtpmap:101 telephone-event/8000
        a=setup:actpass
        a=ssrc:2655508255 cname:{57b6fb7e-bfea-4155-9a28-f7b324e4e25a}
        m=video 9 UDP/TLS/RTP/SAVPF 120 124 121 125 126 127 97 98 123 122 119
        c=IN IP4 0.0.0.0
        a=sendrecv
        a=extmap:3 urn:ietf:params:rtp-hdrext:sdes:mid
        a=extmap:4 http://www.webrtc.org/experiments/rtp-hdrext/abs-send-time
        a=extmap:5 urn:ietf:params:rtp-hdrext:toffset
        a=extmap:6/recvonly http://www.webrtc.org/experiments/rtp-hdrext/playout-delay
        a=extmap:7 http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01
        a=fmtp:126 profile-level-id=42e01f;level-asymmetry-allowed=1;packetization-mode=1
        a=fmtp:97 profile-level-id=42e01f;level-asymmetry-allowed=1
        a=fmtp:120 max-fs=12288;max-fr=60
        a=fmtp:124 apt=120
        a=fmtp:121 max-fs=12288;max-fr=60
        a=fmtp:125 apt=121
        a=fmtp:127 apt=126
        a=fmtp:98 apt=97
        a=fmtp:119 apt=122
        a=ice-pwd:1af3176813e02ea68ef786e4d3cea27d
        a=ice-ufrag:26934b48
        a=mid:1
        a=msid:{8b0d590b-b0a8-44e5-a587-be6b5c9bcf35} {873be078-f3b7-450d-b373-ca533488f876}
        a=rtcp-fb:120 nack
        a=rtcp-fb:120 nack pli
        a=rtcp-fb:120 ccm fir
        a=rtcp-fb:120 goog-remb
        a=rtcp-fb:120 transport-cc
        a=rtcp-fb:121 nack
        a=rtcp-fb:121 nack pli
        a=rtcp-fb:121 ccm fir
        a=rtcp-fb:121 goog-remb
        a=rtcp-fb:121 transport-cc
        a=rtcp-fb:126 nack
        a=rtcp-fb:126 nack pli
        a=rtcp-fb:126 ccm fir
        a=rtcp-fb:126 goog-remb
        a=rtcp-fb:126 transport-cc
        a=rtcp-fb:97 nack
        a=rtcp-fb:97 nack pli
        a=rtcp-fb:97 ccm fir
        a=rtcp-fb:97 goog-remb
        a=rtcp-fb:97 transport-cc
        a=rtcp-fb:123 nack
        a=rtcp-fb:123 nack pli
        a=rtcp-fb:123 ccm fir
        a=rtcp-fb:123 goog-remb
        a=rtcp-fb:123 transport-cc
        a=rtcp-mux
        a=rtcp-rsize
        a=rtpmap:120 VP8/90000
        a=rtpmap:124 rtx/90000
        a=rtpmap:121 VP9/90000
        a=rtpmap:125 rtx/90000
        a=rtpmap:126 H264/90000
        a=rtpmap:127 rtx/90000
        a=rtpmap:97 H264/90000
        a=rtpmap:98 rtx/90000
        a=rtpmap:123 ulpfec/90000
        a=rtpmap:122 red/90000
        a=rtpmap:119 rtx/90000
        a=setup:actpass
        a=ssrc:1502340891 cname:{57b6fb7e-bfea-4155-9a28-f7b324e4e25a}
        a=ssrc:3017411285 cname:{57b6fb7e-bfea-4155-9a28-f7b324e4e25a}
        a=ssrc-group:FID 1502340891 3017411285
        """)

    /// aiortc: no trickle (all candidates, then end-of-candidates), the default candidate's
    /// address on m= and c=, sha-256 and sha-512 fingerprints, and the old SCTP data channel
    /// form (`DTLS/SCTP 5000` with `a=sctpmap`). LF line endings, as hand-written files have.
    static let aiortcOffer = """
        v=0
        o=- 3917338812 3917338812 IN IP4 0.0.0.0
        s=-
        t=0 0
        a=group:BUNDLE 0 1
        a=msid-semantic:WMS *
        m=video 55702 UDP/TLS/RTP/SAVPF 97 98 99 100 101 102
        c=IN IP4 192.168.1.40
        a=sendrecv
        a=extmap:1 urn:ietf:params:rtp-hdrext:sdes:mid
        a=extmap:2 http://www.webrtc.org/experiments/rtp-hdrext/abs-send-time
        a=mid:0
        a=msid:873be078-f3b7-450d-b373-ca533488f876 8b0d590b-b0a8-44e5-a587-be6b5c9bcf35
        a=rtcp:9 IN IP4 0.0.0.0
        a=rtcp-mux
        a=ssrc-group:FID 1845476211 3305256354
        a=ssrc:1845476211 cname:a8b3c2d1-5e6f-4a7b-8c9d-0e1f2a3b4c5d
        a=ssrc:3305256354 cname:a8b3c2d1-5e6f-4a7b-8c9d-0e1f2a3b4c5d
        a=rtpmap:97 VP8/90000
        a=rtcp-fb:97 nack
        a=rtcp-fb:97 nack pli
        a=rtcp-fb:97 goog-remb
        a=rtpmap:98 rtx/90000
        a=fmtp:98 apt=97
        a=rtpmap:99 H264/90000
        a=rtcp-fb:99 nack
        a=rtcp-fb:99 nack pli
        a=rtcp-fb:99 goog-remb
        a=fmtp:99 level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42001f
        a=rtpmap:100 rtx/90000
        a=fmtp:100 apt=99
        a=rtpmap:101 H264/90000
        a=rtcp-fb:101 nack
        a=rtcp-fb:101 nack pli
        a=rtcp-fb:101 goog-remb
        a=fmtp:101 level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42e01f
        a=rtpmap:102 rtx/90000
        a=fmtp:102 apt=101
        a=candidate:1af3176813e02ea68ef786e4d3cea27d 1 udp 2130706431 192.168.1.40 55702 typ host
        a=candidate:26934b484e73cf575dcad6ba2b0aee0c 1 udp 2130706431 2001:db8:4860:1:2e0:4cff:fe68:1b5 55703 typ host
        a=candidate:7e3a9c0b5d2f4e6a8b1c3d5e7f9a0b2c 1 udp 1694498815 203.0.113.77 55702 typ srflx raddr \
        192.168.1.40 rport 55702
        a=end-of-candidates
        a=ice-ufrag:yBdG
        a=ice-pwd:BLEPH1qhT61qtc4xatws8p
        a=fingerprint:sha-256 27:A0:AE:B3:FE:E9:23:2F:8A:F2:21:1F:9E:E4:91:C5:B1:0B:EC:B5:56:3B:FC:1E:6F:93:42:7E:CB:\
        C8:FE:29
        a=fingerprint:sha-512 55:E5:CD:8E:46:DC:8E:D4:B7:C2:76:4D:2A:5A:4D:76:77:06:F8:5D:86:90:02:4A:D6:BD:A3:40:1B:\
        E9:C8:CB:CC:C9:35:F6:CD:1F:61:22:6A:E1:53:38:AE:1A:34:00:4D:33:BA:0D:24:6A:C0:4C:81:B1:BA:F2:3E:3B:F9:EE
        a=setup:actpass
        m=application 55704 DTLS/SCTP 5000
        c=IN IP4 192.168.1.40
        a=mid:1
        a=sctpmap:5000 webrtc-datachannel 65535
        a=max-message-size:65536
        a=candidate:1af3176813e02ea68ef786e4d3cea27d 1 udp 2130706431 192.168.1.40 55704 typ host
        a=end-of-candidates
        a=ice-ufrag:yBdG
        a=ice-pwd:BLEPH1qhT61qtc4xatws8p
        a=fingerprint:sha-256 27:A0:AE:B3:FE:E9:23:2F:8A:F2:21:1F:9E:E4:91:C5:B1:0B:EC:B5:56:3B:FC:1E:6F:93:42:7E:CB:\
        C8:FE:29
        a=setup:actpass

        """

    /// Every offer fixture, named.
    static let offers: [(name: String, text: String)] = [
        ("chrome", chromeOffer), ("firefox", firefoxOffer), ("aiortc", aiortcOffer),
    ]

    /// Candidate attributes as each stack writes them (with or without `a=`).
    static let candidates: [(stack: String, text: String)] = [
        (
            "chrome",
            "candidate:2999745851 1 udp 2122260223 57b6fb7e-bfea-4155-9a28-f7b324e4e25a.local 54321 typ host "
                + "generation 0 ufrag dMlH network-id 1 network-cost 10"
        ),
        (
            "chrome",
            "candidate:1677313431 1 udp 1686052607 203.0.113.45 54321 typ srflx raddr 0.0.0.0 rport 0 generation 0 "
                + "ufrag dMlH network-id 1 network-cost 10"
        ),
        (
            "chrome",
            "candidate:4233069003 1 tcp 1518280447 192.168.1.10 9 typ host tcptype active generation 0 ufrag dMlH "
                + "network-id 1"
        ),
        (
            "chrome",
            "candidate:3105231296 1 udp 41885439 198.51.100.9 60411 typ relay raddr 203.0.113.45 rport 54321 "
                + "generation 0 ufrag dMlH network-id 1 network-cost 10"
        ),
        (
            "chrome",
            "candidate:1890211651 1 udp 2122197247 2001:db8:85a3::8a2e:370:7334 61002 typ host generation 0 ufrag "
                + "dMlH network-id 2 network-cost 10"
        ),
        (
            "chrome",
            "a=candidate:2162486046 2 udp 2113937151 192.168.1.10 54322 typ host generation 0 ufrag dMlH network-cost "
                + "999"
        ),
        ("firefox", "candidate:0 1 UDP 2122252543 873be078-f3b7-450d-b373-ca533488f876.local 61874 typ host"),
        ("firefox", "candidate:2 1 TCP 2105524479 192.168.1.23 9 typ host tcptype active"),
        ("firefox", "candidate:1 1 UDP 1686052863 198.51.100.23 61874 typ srflx raddr 192.168.1.23 rport 61874"),
        ("firefox", "candidate:3 1 UDP 92217087 198.51.100.200 53042 typ relay raddr 198.51.100.23 rport 61874"),
        ("firefox", "candidate:4 1 TCP 2105458943 2001:db8::5ef:1 9 typ host tcptype active"),
        ("aiortc", "candidate:1af3176813e02ea68ef786e4d3cea27d 1 udp 2130706431 192.168.1.40 55702 typ host"),
        (
            "aiortc",
            "candidate:26934b484e73cf575dcad6ba2b0aee0c 1 udp 2130706431 2001:db8:4860:1:2e0:4cff:fe68:1b5 55703 typ "
                + "host"
        ),
        (
            "aiortc",
            "candidate:7e3a9c0b5d2f4e6a8b1c3d5e7f9a0b2c 1 udp 1694498815 203.0.113.77 55702 typ srflx raddr "
                + "192.168.1.40 rport 55702"
        ),
        ("aiortc", "a=candidate:9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a 1 tcp 1671430143 10.0.0.5 9 typ host tcptype passive"),
    ]
}
