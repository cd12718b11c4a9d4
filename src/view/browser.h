/* Starting the user's web browser on a URL. */
#ifndef CALLTRACE_VIEW_BROWSER_H
#define CALLTRACE_VIEW_BROWSER_H

#include <stddef.h>

/* Opens url with $BROWSER (a colon-separated list of commands; %s in one stands for the URL,
 * else the URL is appended), or else with xdg-open when there is a display. Returns 0 once a
 * browser is started, or -1 with the reason in why. */
int browser_open(const char *url, char *why, size_t whylen);

#endif
