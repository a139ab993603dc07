#define _GNU_SOURCE
#include "csystem.h"
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <netinet/in.h>
#include <netinet/udp.h>

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#ifndef UDP_GRO
#define UDP_GRO 104
#endif

const uint32_t CS_EPOLLIN = EPOLLIN;
const uint32_t CS_EPOLLOUT = EPOLLOUT;
const uint32_t CS_EPOLLERR = EPOLLERR;
const uint32_t CS_EPOLLHUP = EPOLLHUP;
const uint32_t CS_EPOLLRDHUP = EPOLLRDHUP;
const int CS_SO_REUSEPORT = SO_REUSEPORT;

int cs_epoll_create(void) { return epoll_create1(EPOLL_CLOEXEC); }

static int ctl(int epfd, int op, int fd, uint32_t events, uint64_t token) {
    struct epoll_event ev;
    memset(&ev, 0, sizeof ev);
    ev.events = events;
    ev.data.u64 = token;
    return epoll_ctl(epfd, op, fd, &ev);
}

int cs_epoll_add(int epfd, int fd, uint32_t events, uint64_t token) { return ctl(epfd, EPOLL_CTL_ADD, fd, events, token); }
int cs_epoll_modify(int epfd, int fd, uint32_t events, uint64_t token) { return ctl(epfd, EPOLL_CTL_MOD, fd, events, token); }
int cs_epoll_remove(int epfd, int fd) { return epoll_ctl(epfd, EPOLL_CTL_DEL, fd, NULL); }

int cs_epoll_wait(int epfd, cs_event *events, int max, int timeout_ms) {
    struct epoll_event raw[256];
    if (max > 256) max = 256;
    int n;
    do { n = epoll_wait(epfd, raw, max, timeout_ms); } while (n < 0 && errno == EINTR);
    for (int i = 0; i < n; i++) {
        events[i].events = raw[i].events;
        events[i].token = raw[i].data.u64;
    }
    return n;
}

int cs_eventfd(void) { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }
int cs_pipe_cloexec(int fds[2]) { return pipe2(fds, O_CLOEXEC); }

int cs_eventfd_signal(int fd) {
    uint64_t one = 1;
    return write(fd, &one, sizeof one) == sizeof one ? 0 : -1;
}

int cs_eventfd_drain(int fd) {
    uint64_t value;
    return read(fd, &value, sizeof value) == sizeof value ? 0 : -1;
}

int cs_accept(int fd, struct sockaddr *addr, socklen_t *len) {
    return accept4(fd, addr, len, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

int cs_recvmmsg(int fd, uint8_t *buffers, size_t size, unsigned count, size_t *lengths,
                struct sockaddr_storage *sources, socklen_t *source_lengths) {
    struct mmsghdr msgs[64];
    struct iovec iov[64];
    if (count > 64) count = 64;
    memset(msgs, 0, sizeof(struct mmsghdr) * count);
    for (unsigned i = 0; i < count; i++) {
        iov[i].iov_base = buffers + i * size;
        iov[i].iov_len = size;
        msgs[i].msg_hdr.msg_iov = &iov[i];
        msgs[i].msg_hdr.msg_iovlen = 1;
        msgs[i].msg_hdr.msg_name = &sources[i];
        msgs[i].msg_hdr.msg_namelen = sizeof(struct sockaddr_storage);
    }
    int n;
    do { n = recvmmsg(fd, msgs, count, MSG_DONTWAIT, NULL); } while (n < 0 && errno == EINTR);
    for (int i = 0; i < n; i++) {
        lengths[i] = msgs[i].msg_len;
        source_lengths[i] = msgs[i].msg_hdr.msg_namelen;
    }
    return n;
}

int cs_sendmmsg(int fd, const uint8_t *buffers, const size_t *offsets, const size_t *lengths,
                const struct sockaddr_storage *destinations, const socklen_t *destination_lengths,
                unsigned count) {
    struct mmsghdr msgs[64];
    struct iovec iov[64];
    if (count > 64) count = 64;
    memset(msgs, 0, sizeof(struct mmsghdr) * count);
    for (unsigned i = 0; i < count; i++) {
        iov[i].iov_base = (void *)(buffers + offsets[i]);
        iov[i].iov_len = lengths[i];
        msgs[i].msg_hdr.msg_iov = &iov[i];
        msgs[i].msg_hdr.msg_iovlen = 1;
        msgs[i].msg_hdr.msg_name = (void *)&destinations[i];
        msgs[i].msg_hdr.msg_namelen = destination_lengths[i];
    }
    int n;
    do { n = sendmmsg(fd, msgs, count, MSG_DONTWAIT); } while (n < 0 && errno == EINTR);
    return n;
}

int cs_recvmmsg_strided(int fd, uint8_t *base, size_t stride, size_t headroom, size_t capacity, unsigned count,
                        size_t *lengths, struct sockaddr_storage *sources, socklen_t *source_lengths) {
    struct mmsghdr msgs[64];
    struct iovec iov[64];
    if (count > 64) count = 64;
    memset(msgs, 0, sizeof(struct mmsghdr) * count);
    for (unsigned i = 0; i < count; i++) {
        iov[i].iov_base = base + i * stride + headroom;
        iov[i].iov_len = capacity;
        msgs[i].msg_hdr.msg_iov = &iov[i];
        msgs[i].msg_hdr.msg_iovlen = 1;
        msgs[i].msg_hdr.msg_name = &sources[i];
        msgs[i].msg_hdr.msg_namelen = sizeof(struct sockaddr_storage);
    }
    int n;
    do { n = recvmmsg(fd, msgs, count, MSG_DONTWAIT, NULL); } while (n < 0 && errno == EINTR);
    for (int i = 0; i < n; i++) {
        lengths[i] = msgs[i].msg_len;
        source_lengths[i] = msgs[i].msg_hdr.msg_namelen;
    }
    return n;
}

int cs_send_batch(int fd, const cs_outgoing *messages, unsigned count) {
    struct mmsghdr msgs[64];
    union {
        char bytes[CMSG_SPACE(sizeof(uint16_t))];
        struct cmsghdr align;
    } control[64];
    if (count > 64) count = 64;
    memset(msgs, 0, sizeof(struct mmsghdr) * count);
    for (unsigned i = 0; i < count; i++) {
        const cs_outgoing *m = &messages[i];
        msgs[i].msg_hdr.msg_iov = (struct iovec *)m->iov;
        msgs[i].msg_hdr.msg_iovlen = m->iov_count;
        msgs[i].msg_hdr.msg_name = (void *)m->destination;
        msgs[i].msg_hdr.msg_namelen = m->destination_length;
        if (m->segment_size > 0) {
            memset(&control[i], 0, sizeof control[i]);
            msgs[i].msg_hdr.msg_control = control[i].bytes;
            msgs[i].msg_hdr.msg_controllen = sizeof control[i].bytes;
            struct cmsghdr *c = CMSG_FIRSTHDR(&msgs[i].msg_hdr);
            c->cmsg_level = SOL_UDP;
            c->cmsg_type = UDP_SEGMENT;
            c->cmsg_len = CMSG_LEN(sizeof(uint16_t));
            memcpy(CMSG_DATA(c), &m->segment_size, sizeof(uint16_t));
        }
    }
    int n;
    do { n = sendmmsg(fd, msgs, count, MSG_DONTWAIT); } while (n < 0 && errno == EINTR);
    return n;
}

int cs_enable_gro(int fd) {
    int one = 1;
    return setsockopt(fd, SOL_UDP, UDP_GRO, &one, sizeof one);
}

int cs_gro_segment_size(const void *control, size_t control_length) {
    // Walked by hand, not with CMSG_NXTHDR, so that every length is checked against the buffer
    // before anything it covers is read.
    const char *start = control;
    size_t offset = 0;
    while (control != NULL && control_length - offset >= sizeof(struct cmsghdr)) {
        struct cmsghdr header;
        memcpy(&header, start + offset, sizeof header);
        if (header.cmsg_len < sizeof(struct cmsghdr) || header.cmsg_len > control_length - offset) return -1;
        if (header.cmsg_level == SOL_UDP && header.cmsg_type == UDP_GRO) {
            // udp_cmsg_recv (net/ipv4/udp.c) puts the skb's gso_size as an int.
            if (header.cmsg_len < CMSG_LEN(sizeof(int))) return -1;
            int size;
            memcpy(&size, start + offset + CMSG_LEN(0), sizeof size);
            return size > 0 ? size : -1;
        }
        size_t next = CMSG_ALIGN(header.cmsg_len);
        if (next >= control_length - offset) return 0;
        offset += next;
    }
    return 0;
}

int cs_recvmmsg_segmented(int fd, uint8_t *buffers, size_t size, unsigned count, size_t *lengths,
                          struct sockaddr_storage *sources, socklen_t *source_lengths, int *segment_sizes) {
    struct mmsghdr msgs[64];
    struct iovec iov[64];
    union {
        char bytes[CMSG_SPACE(sizeof(int)) * 2];
        struct cmsghdr align;
    } control[64];
    if (count > 64) count = 64;
    memset(msgs, 0, sizeof(struct mmsghdr) * count);
    for (unsigned i = 0; i < count; i++) {
        iov[i].iov_base = buffers + i * size;
        iov[i].iov_len = size;
        msgs[i].msg_hdr.msg_iov = &iov[i];
        msgs[i].msg_hdr.msg_iovlen = 1;
        msgs[i].msg_hdr.msg_name = &sources[i];
        msgs[i].msg_hdr.msg_namelen = sizeof(struct sockaddr_storage);
        msgs[i].msg_hdr.msg_control = control[i].bytes;
        msgs[i].msg_hdr.msg_controllen = sizeof control[i].bytes;
    }
    int n;
    do { n = recvmmsg(fd, msgs, count, MSG_DONTWAIT, NULL); } while (n < 0 && errno == EINTR);
    for (int i = 0; i < n; i++) {
        lengths[i] = msgs[i].msg_len;
        source_lengths[i] = msgs[i].msg_hdr.msg_namelen;
        // A cut-short control area (MSG_CTRUNC) may have lost the segment size: unknown, so -1.
        segment_sizes[i] = (msgs[i].msg_hdr.msg_flags & MSG_CTRUNC)
            ? -1 : cs_gro_segment_size(control[i].bytes, msgs[i].msg_hdr.msg_controllen);
    }
    return n;
}

int cs_errno(void) { return errno; }
