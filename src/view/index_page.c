#include "view/index_page.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int view_deep_link(char *out, size_t outlen, const char *ui_base, const char *server,
                   const char *url_path)
{
    int n = snprintf(out, outlen, "%s#!/?url=%s%s", ui_base, server, url_path);
    return n < 0 || (size_t)n >= outlen ? -1 : 0;
}

/* Run names are arbitrary bytes: escaped so that none can add markup to the page. */
static void put_html(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<':
            fputs("&lt;", f);
            break;
        case '>':
            fputs("&gt;", f);
            break;
        case '&':
            fputs("&amp;", f);
            break;
        case '"':
            fputs("&quot;", f);
            break;
        case '\'':
            fputs("&#39;", f);
            break;
        default:
            fputc(*s, f);
        }
    }
}

static void put_entry(FILE *f, const struct view_entry *e, const char *ui_base, const char *server)
{
    char when[64] = "", link[4096];
    struct tm tm;
    if (localtime_r(&e->mtime.tv_sec, &tm))
        strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
    fputs("<tr><td>", f);
    if (!e->problem && view_deep_link(link, sizeof(link), ui_base, server, e->url_path) == 0) {
        fputs("<a href=\"", f);
        put_html(f, link);
        fputs("\">", f);
        put_html(f, e->name);
        fputs("</a>", f);
    } else {
        put_html(f, e->name);
    }
    fprintf(f, "</td><td>%s</td><td>%lld</td><td>", when, e->size);
    if (e->problem)
        put_html(f, e->problem);
    else
        put_html(f, e->url_path);
    fputs("</td></tr>\n", f);
}

char *index_page(const struct view_target *t, const char *ui_base, const char *server)
{
    char *page = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&page, &size);
    if (!f)
        return NULL;
    fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>calltrace runs in ", f);
    put_html(f, t->dir);
    fputs("</title></head>\n<body><h1>calltrace runs in ", f);
    put_html(f, t->dir);
    fputs("</h1>\n<p>Newest first; each opens in Perfetto.</p>\n"
          "<table>\n<tr><th>run</th><th>modified</th><th>bytes</th><th>trace</th></tr>\n",
          f);
    for (size_t i = 0; i < t->n; i++)
        put_entry(f, &t->entries[i], ui_base, server);
    fputs("</table>\n</body></html>\n", f);
    if (fclose(f) != 0) {
        free(page);
        return NULL;
    }
    return page;
}
