#include "remote/memory.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

int mem_open(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
    return open(path, O_RDWR | O_CLOEXEC);
}

int mem_read(int fd, uint64_t addr, void *buf, size_t len)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = pread(fd, (char *)buf + done, len - done, (off_t)(addr + done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n == 0)
                errno = EIO;
            return -1;
        }
        done += (size_t)n;
    }
    return 0;
}

int mem_write(int fd, uint64_t addr, const void *buf, size_t len)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = pwrite(fd, (const char *)buf + done, len - done, (off_t)(addr + done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n == 0)
                errno = EIO;
            return -1;
        }
        done += (size_t)n;
    }
    return 0;
}
