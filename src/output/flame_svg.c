#include "output/flame_svg.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/duration.h"
#include "util/log.h"
#include "util/text_escape.h"
#include "util/utf8.h"

#define SVG_WIDTH 1200
#define SVG_PAD 10       /* left and right */
#define FRAME_HEIGHT 16  /* a frame's row; its box is a pixel less */
#define SVG_TOP 60       /* the heading and the buttons */
#define SVG_BOTTOM 30    /* the details line and "Matched" */
#define MIN_FRAME_PX 0.1 /* narrower frames are left out, as flamegraph.pl does */
#define CHAR_PX 7        /* about the width of a 12 px monospace character */

/* Escaped text (util/text_escape.h: valid UTF-8 without a control byte, which XML 1.0 cannot
 * carry even escaped) inside XML, its markup escaped; at most max_chars characters. */
static void put_xml_escaped(FILE *out, const char *shown, size_t max_chars)
{
    const unsigned char *p = (const unsigned char *)shown;
    size_t left = strlen(shown), chars = 0;
    while (left && chars < max_chars) {
        size_t len = utf8_valid_len(p, left);
        if (!len) { /* not from text_escape */
            fputs("\xef\xbf\xbd", out);
            len = 1;
        } else if (*p == '&') {
            fputs("&amp;", out);
        } else if (*p == '<') {
            fputs("&lt;", out);
        } else if (*p == '>') {
            fputs("&gt;", out);
        } else if (*p == '"') {
            fputs("&quot;", out);
        } else {
            fwrite(p, 1, len, out);
        }
        p += len;
        left -= len;
        chars++;
    }
}

/* Text of the traced program inside XML: shown as text output shows it, so that the graph's
 * labels read as report's lines. */
static void put_xml_text(FILE *out, const char *s)
{
    char *shown = text_escape_dup(s, TEXT_NAME);
    put_xml_escaped(out, shown ? shown : "?", SIZE_MAX);
    free(shown);
}

static size_t utf8_chars(const char *s)
{
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        n += (*p & 0xc0) != 0x80;
    return n;
}

/* The label that fits a frame w pixels wide: the name, or its start and "..", or nothing. */
static void put_label(FILE *out, const char *name, double w)
{
    long fit = (long)((w - 6) / CHAR_PX);
    if (fit < 3)
        return;
    char *shown = text_escape_dup(name, TEXT_NAME);
    const char *text = shown ? shown : "?";
    if (utf8_chars(text) <= (size_t)fit) {
        put_xml_escaped(out, text, SIZE_MAX);
    } else {
        put_xml_escaped(out, text, (size_t)fit - 2);
        fputs("..", out);
    }
    free(shown);
}

/* Warm colours, the same for the same name in every graph (a hash, not the order). */
static void put_colour(FILE *out, const char *name)
{
    uint32_t h = 2166136261u;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        h = (h ^ *p) * 16777619u;
    unsigned r = 205 + (h & 0xff) * 50 / 255, g = ((h >> 8) & 0xff) * 230 / 255,
             b = ((h >> 16) & 0xff) * 55 / 255;
    fprintf(out, "rgb(%u,%u,%u)", r, g, b);
}

struct svg_ctx {
    FILE *out;
    const struct flame *f;
    call_tree_name_fn *name;
    void *name_ctx;
    double scale; /* pixels per weight unit */
    uint32_t max_depth;
    int height;
};

static void put_amount(FILE *out, const struct flame *f, uint64_t weight)
{
    char d[32];
    if (f->calls)
        fprintf(out, "%llu calls", (unsigned long long)weight);
    else
        fputs(duration_format(d, sizeof(d), (int64_t)weight), out);
}

static void put_frame(struct svg_ctx *sc, uint32_t n)
{
    const struct flame *f = sc->f;
    const struct call_tree_node *node = &f->tree->nodes[n];
    char buf[48];
    const char *name = call_tree_node_name(f->tree, n, sc->name, sc->name_ctx, buf, sizeof(buf));
    double x = SVG_PAD + (double)f->x[n] * sc->scale, w = (double)f->subtree[n] * sc->scale;
    int y = sc->height - SVG_BOTTOM - (int)(node->depth + 1) * FRAME_HEIGHT;
    uint64_t total = f->subtree[CALL_TREE_ROOT];
    FILE *out = sc->out;
    fprintf(out, "<g class=\"f\" data-x=\"%llu\" data-w=\"%llu\" data-d=\"%u\"><title>",
            (unsigned long long)f->x[n], (unsigned long long)f->subtree[n], node->depth);
    put_xml_text(out, name);
    fputs("&#10;", out);
    if (n != CALL_TREE_ROOT && !(node->sym & CALL_TREE_THREAD))
        fprintf(out, "%llu call%s, ", (unsigned long long)node->calls, node->calls == 1 ? "" : "s");
    put_amount(out, f, f->subtree[n]);
    fprintf(out, " (%.2f%%)</title><rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"",
            total ? 100.0 * (double)f->subtree[n] / (double)total : 0.0, x, y,
            w > 0.5 ? w - 0.5 : w, FRAME_HEIGHT - 1);
    put_colour(out, name);
    fprintf(out, "\" rx=\"2\" ry=\"2\"/><text x=\"%.2f\" y=\"%d\">", x + 3, y + FRAME_HEIGHT - 4);
    put_label(out, name, w);
    fputs("</text></g>\n", out);
}

static bool drawn(const struct svg_ctx *sc, uint32_t n)
{
    return (double)sc->f->subtree[n] * sc->scale >= MIN_FRAME_PX;
}

static int deepest(void *arg, const struct call_tree *t, uint32_t n)
{
    struct svg_ctx *sc = arg;
    if (drawn(sc, n) && t->nodes[n].depth > sc->max_depth)
        sc->max_depth = t->nodes[n].depth;
    return 0;
}

static int draw(void *arg, const struct call_tree *t, uint32_t n)
{
    struct svg_ctx *sc = arg;
    (void)t;
    if (drawn(sc, n))
        put_frame(sc, n);
    return 0;
}

/* Zoom, search and the labels, for a browser. The frames carry their place in weight units
 * (data-x, data-w) and their depth (data-d); every change lays them out again from those. */
static const char script[] =
    "var svg = document.documentElement, frames = [], total = 1, zoomed = null, re = null;\n"
    "var W = +svg.getAttribute('width'), PAD = 10, CHAR = 7;\n"
    "function num(g, k) { return +g.getAttribute('data-' + k); }\n"
    "function nameOf(g) { return g.querySelector('title').textContent.split('\\n')[0]; }\n"
    "function label(t, s, w) {\n"
    "  var fit = Math.floor((w - 6) / CHAR), c = Array.from(s);\n"
    "  t.textContent = fit < 3 ? '' : c.length <= fit ? s : c.slice(0, fit - 2).join('') + '..';\n"
    "}\n"
    "function layout() {\n"
    "  var zx = zoomed ? num(zoomed, 'x') : 0, zw = zoomed ? num(zoomed, 'w') : total;\n"
    "  var zd = zoomed ? num(zoomed, 'd') : 0, scale = (W - 2 * PAD) / Math.max(zw, 1);\n"
    "  frames.forEach(function (g) {\n"
    "    var x = num(g, 'x'), w = num(g, 'w'), d = num(g, 'd');\n"
    "    var inside = d >= zd && x >= zx && x + w <= zx + zw;\n"
    "    var caller = d < zd && x <= zx && x + w >= zx + zw;\n"
    "    var px = caller ? PAD : PAD + (x - zx) * scale, pw = caller ? W - 2 * PAD : w * scale;\n"
    "    if (!(inside || caller) || pw < 0.1) { g.style.display = 'none'; return; }\n"
    "    g.style.display = '';\n"
    "    g.style.opacity = caller && zoomed ? 0.5 : 1;\n"
    "    var r = g.querySelector('rect'), t = g.querySelector('text');\n"
    "    r.setAttribute('x', px.toFixed(2));\n"
    "    r.setAttribute('width', Math.max(pw - 0.5, 0).toFixed(2));\n"
    "    t.setAttribute('x', (px + 3).toFixed(2));\n"
    "    label(t, nameOf(g), pw);\n"
    "  });\n"
    "  document.getElementById('unzoom').style.opacity = zoomed ? 1 : 0;\n"
    "}\n"
    "function mark() {\n"
    "  var spans = [];\n"
    "  frames.forEach(function (g) {\n"
    "    var r = g.querySelector('rect');\n"
    "    if (!r.hasAttribute('data-fill')) r.setAttribute('data-fill', r.getAttribute('fill'));\n"
    "    var hit = re !== null && num(g, 'd') > 0 && re.test(nameOf(g));\n"
    "    r.setAttribute('fill', hit ? 'rgb(230,0,230)' : r.getAttribute('data-fill'));\n"
    "    if (hit) spans.push([num(g, 'x'), num(g, 'x') + num(g, 'w')]);\n"
    "  });\n"
    "  spans.sort(function (a, b) { return a[0] - b[0]; });\n"
    "  var covered = 0, end = -1;\n"
    "  spans.forEach(function (s) {\n"
    "    if (s[0] >= end) { covered += s[1] - s[0]; end = s[1]; }\n"
    "    else if (s[1] > end) { covered += s[1] - end; end = s[1]; }\n"
    "  });\n"
    "  document.getElementById('matched').textContent =\n"
    "    re === null ? '' : 'Matched: ' + (100 * covered / Math.max(total, 1)).toFixed(2) + '%';\n"
    "  document.getElementById('search').textContent = re === null ? 'Search' : 'Reset search';\n"
    "}\n"
    "function search() {\n"
    "  if (re !== null) { re = null; mark(); return; }\n"
    "  var s = prompt('Frames whose name matches (a regular expression):', '');\n"
    "  if (!s) return;\n"
    "  try { re = new RegExp(s); } catch (e) { alert(e.message); return; }\n"
    "  mark();\n"
    "}\n"
    "svg.addEventListener('click', function (e) {\n"
    "  var t = e.target;\n"
    "  if (t.id === 'unzoom') { zoomed = null; layout(); return; }\n"
    "  if (t.id === 'search') { search(); return; }\n"
    "  var g = t.closest ? t.closest('g.f') : null;\n"
    "  if (g) { zoomed = num(g, 'd') === 0 ? null : g; layout(); }\n"
    "});\n"
    "svg.addEventListener('mouseover', function (e) {\n"
    "  var g = e.target.closest ? e.target.closest('g.f') : null;\n"
    "  document.getElementById('details').textContent =\n"
    "    g ? g.querySelector('title').textContent.replace('\\n', ': ') : ' ';\n"
    "});\n"
    "window.addEventListener('keydown', function (e) {\n"
    "  if ((e.ctrlKey && e.key === 'f') || e.key === '/') { e.preventDefault(); re = null; "
    "search(); }\n"
    "  if (e.key === 'Escape') { zoomed = null; re = null; layout(); mark(); }\n"
    "});\n"
    "frames = Array.prototype.slice.call(document.querySelectorAll('g.f'));\n"
    "if (frames.length) total = num(frames[0], 'w');\n"
    "layout();\n";

static void put_head(struct svg_ctx *sc, const struct flame_svg_options *opts)
{
    FILE *out = sc->out;
    fprintf(out,
            "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
            "<svg version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
            "xmlns=\"http://www.w3.org/2000/svg\">\n"
            "<style type=\"text/css\">\n"
            "text { font-family: monospace; font-size: 12px; fill: rgb(0,0,0); }\n"
            "g.f:hover rect { stroke: rgb(0,0,0); stroke-width: 0.5; cursor: pointer; }\n"
            "#title { font-size: 17px; } #unzoom, #search { cursor: pointer; }\n"
            "</style>\n"
            "<rect x=\"0\" y=\"0\" width=\"100%%\" height=\"100%%\" fill=\"rgb(250,250,238)\"/>\n"
            "<text id=\"title\" x=\"%d\" y=\"24\" text-anchor=\"middle\">",
            SVG_WIDTH, sc->height, SVG_WIDTH, sc->height, SVG_WIDTH / 2);
    put_xml_text(out, opts->title ? opts->title : "Flame graph");
    fprintf(out, "</text>\n<text x=\"%d\" y=\"44\" text-anchor=\"middle\">", SVG_WIDTH / 2);
    put_xml_text(out, opts->subtitle ? opts->subtitle : "");
    fprintf(out,
            "</text>\n"
            "<text id=\"unzoom\" x=\"%d\" y=\"24\" style=\"opacity: 0\">Reset zoom</text>\n"
            "<text id=\"search\" x=\"%d\" y=\"24\" text-anchor=\"end\">Search</text>\n"
            "<text id=\"details\" x=\"%d\" y=\"%d\"> </text>\n"
            "<text id=\"matched\" x=\"%d\" y=\"%d\" text-anchor=\"end\"></text>\n",
            SVG_PAD, SVG_WIDTH - SVG_PAD, SVG_PAD, sc->height - 10, SVG_WIDTH - SVG_PAD,
            sc->height - 10);
}

int flame_svg_write(FILE *out, const struct flame *f, call_tree_name_fn *name, void *name_ctx,
                    const struct flame_svg_options *opts)
{
    uint64_t total = f->subtree[CALL_TREE_ROOT];
    struct svg_ctx sc = {out, f, name, name_ctx, 0, 0, 0};
    sc.scale = total ? (double)(SVG_WIDTH - 2 * SVG_PAD) / (double)total : 0;
    call_tree_walk(f->tree, deepest, &sc);
    sc.height = SVG_TOP + (int)(sc.max_depth + 1) * FRAME_HEIGHT + SVG_BOTTOM;
    put_head(&sc, opts);
    put_frame(&sc, CALL_TREE_ROOT); /* "all", drawn even when empty: the first frame */
    call_tree_walk(f->tree, draw, &sc);
    fprintf(out, "<script type=\"text/ecmascript\"><![CDATA[\n%s]]></script>\n</svg>\n", script);
    return 0;
}
