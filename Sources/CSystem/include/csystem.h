// CSystem: what Swift's Glibc module does not show (epoll, eventfd, recvmmsg/sendmmsg) or shows
// in a form Swift cannot use (epoll_event is packed on x86-64). Thin wrappers, no logic.
#ifndef ZONERTC_CSYSTEM_H
#define ZONERTC_CSYSTEM_H

#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/uio.h>

/// One readiness event: the epoll event mask and the 64-bit token registered with the fd.
typedef struct {
    uint32_t events;
    uint64_t token;
} cs_event;

extern const uint32_t CS_EPOLLIN;
extern const uint32_t CS_EPOLLOUT;
extern const uint32_t CS_EPOLLERR;
extern const uint32_t CS_EPOLLHUP;
extern const uint32_t CS_EPOLLRDHUP;
extern const int CS_SO_REUSEPORT;

int cs_epoll_create(void);
int cs_epoll_add(int epfd, int fd, uint32_t events, uint64_t token);
int cs_epoll_modify(int epfd, int fd, uint32_t events, uint64_t token);
int cs_epoll_remove(int epfd, int fd);
/// Waits up to timeout_ms (-1: forever); fills at most max events; returns the count or -1.
int cs_epoll_wait(int epfd, cs_event *events, int max, int timeout_ms);

int cs_eventfd(void);
/// pipe2 with O_CLOEXEC: a pipe no concurrently spawned child inherits.
int cs_pipe_cloexec(int fds[2]);
int cs_eventfd_signal(int fd);
int cs_eventfd_drain(int fd);

/// accept4 with SOCK_NONBLOCK | SOCK_CLOEXEC.
int cs_accept(int fd, struct sockaddr *addr, socklen_t *len);

/// Receives up to `count` datagrams into `buffers` (each `size` bytes, laid end to end);
/// fills lengths and source addresses. Returns how many arrived, or -1.
int cs_recvmmsg(int fd, uint8_t *buffers, size_t size, unsigned count, size_t *lengths,
                struct sockaddr_storage *sources, socklen_t *source_lengths);

/// Sends `count` datagrams: payload i is `buffers + offsets[i]`, `lengths[i]` bytes, to
/// `destinations[i]`. Returns how many were sent, or -1.
int cs_sendmmsg(int fd, const uint8_t *buffers, const size_t *offsets, const size_t *lengths,
                const struct sockaddr_storage *destinations, const socklen_t *destination_lengths,
                unsigned count);

/// Like cs_recvmmsg, with datagram i written at `base + i * stride + headroom` (at most `capacity`
/// bytes), so a caller can put a header in front of it and padding after it without copying.
int cs_recvmmsg_strided(int fd, uint8_t *base, size_t stride, size_t headroom, size_t capacity, unsigned count,
                        size_t *lengths, struct sockaddr_storage *sources, socklen_t *source_lengths);

/// One message of a batch send: the bytes gathered from `iov`, to `destination`. A nonzero
/// `segment_size` asks the kernel to cut it into datagrams of that size (UDP_SEGMENT, Linux 4.18;
/// every piece but the last exactly that long), one send for a train of datagrams to one peer.
typedef struct {
    const struct iovec *iov;
    size_t iov_count;
    const struct sockaddr_storage *destination;
    socklen_t destination_length;
    uint16_t segment_size;
} cs_outgoing;

/// Sends `count` messages (at most 64) in one sendmmsg. Returns how many were sent, or -1 with
/// errno (EIO or EINVAL from a kernel or device without UDP segmentation offload).
int cs_send_batch(int fd, const cs_outgoing *messages, unsigned count);

/// Turns on UDP_GRO (Linux 5.0) for `fd`: the kernel may then hand a train of datagrams from one
/// source as one buffer (on loopback, a UDP_SEGMENT send arrives whole), with the segment size in a
/// SOL_UDP/UDP_GRO control message. Returns 0, or -1 with errno when the kernel refuses.
int cs_enable_gro(int fd);

/// The segment size in the UDP_GRO control message among `control_length` bytes of control data
/// (`msg_control` as recvmsg left it); 0 when there is none (the kernel adds it only to a coalesced
/// message, so the message is one datagram); -1 when the control data is malformed (a length that
/// does not hold an int or runs past the buffer, a size not above 0): where the datagrams end is
/// then unknown.
int cs_gro_segment_size(const void *control, size_t control_length);

/// Like cs_recvmmsg, on a socket with UDP_GRO on: message i is `lengths[i]` bytes at
/// `buffers + i * size`, one datagram or several of `segment_sizes[i]` bytes each (the last may be
/// shorter); `segment_sizes[i]` is 0 for a single datagram, -1 when unknown (see
/// cs_gro_segment_size; also a cut-short control area). Returns how many messages, or -1.
int cs_recvmmsg_segmented(int fd, uint8_t *buffers, size_t size, unsigned count, size_t *lengths,
                          struct sockaddr_storage *sources, socklen_t *source_lengths, int *segment_sizes);

/// The errno of the last failed call on this thread.
int cs_errno(void);

#endif
