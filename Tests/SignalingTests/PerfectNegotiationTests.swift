// The W3C perfect-negotiation decisions (WebRTC 1.0 §10.7), one line per case.
import Testing

@testable import Signaling

@Suite("Perfect negotiation")
struct PerfectNegotiationTests {
    private func state(polite: Bool, offering: Bool, published: Bool = false) -> PerfectNegotiation {
        var pn = PerfectNegotiation(polite: polite)
        if offering { pn.localOfferCreated() }
        if published { pn.localOfferPublished() }
        return pn
    }

    @Test func decisions() {
        var pn = state(polite: false, offering: false)
        #expect(pn.receive(.offer) == .apply)
        pn = state(polite: true, offering: false)
        #expect(pn.receive(.offer) == .apply)
        pn = state(polite: false, offering: true)
        #expect(pn.receive(.offer) == .ignore && pn.ignoreOffer)
        pn = state(polite: true, offering: true)
        #expect(pn.receive(.offer) == .rollbackAndApply && !pn.ignoreOffer && pn.signalingState == .stable)
        pn = state(polite: false, offering: true, published: true)
        #expect(pn.receive(.offer) == .ignore)  // still have-local-offer: a collision
        pn = state(polite: true, offering: true, published: true)
        #expect(pn.receive(.answer) == .apply && pn.isSettingRemoteAnswerPending)
        pn = state(polite: true, offering: false)
        #expect(pn.receive(.answer) == .outOfState)
    }

    @Test func flagsFollowTheExchange() {
        var pn = PerfectNegotiation(polite: false)
        pn.localOfferCreated()
        #expect(pn.makingOffer && pn.signalingState == .haveLocalOffer)
        pn.localOfferPublished()
        #expect(!pn.makingOffer)
        #expect(pn.receive(.answer) == .apply)
        pn.remoteDescriptionApplied(.answer)
        #expect(pn.signalingState == .stable && !pn.isSettingRemoteAnswerPending)
        #expect(pn.receive(.offer) == .apply)
        pn.remoteDescriptionApplied(.offer)
        #expect(pn.signalingState == .haveRemoteOffer)
        pn.localAnswerSet()
        #expect(pn.signalingState == .stable)
        pn.localOfferCreated()
        pn.reset()
        #expect(pn == PerfectNegotiation(polite: false))
    }
}
