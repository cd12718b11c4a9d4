/* Who holds a TCP port: for an error that names the program to stop. */
#ifndef CALLTRACE_VIEW_PORT_OWNER_H
#define CALLTRACE_VIEW_PORT_OWNER_H

#include <stddef.h>

/* Writes "NAME (pid N)" of a process listening on TCP port `port` (IPv4 or IPv6) into out.
 * Returns 0, or -1 when it cannot be told (for example, another user's process). */
int port_owner(int port, char *out, size_t outlen);

#endif
