// The DTLS module: the DTLS 1.2 handshake as a sans-I/O machine around OpenSSL (RFC 6347), SRTP
// keys from it (RFC 5764) and SRTP/SRTCP through libsrtp2 (RFC 3711, RFC 7714), on one 5-tuple
// demultiplexed by RFC 7983. Its code is compiled only with the package trait `WebRTC`: without
// it this module is empty and nothing reads an OpenSSL or libsrtp2 header.
