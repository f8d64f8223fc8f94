/* A strict RFC 8259 reader for the tests: json_valid(text) is 1 when text
   is exactly one JSON value (surrounded by optional whitespace), 0
   otherwise. Shared by tests/test_scope.c and the differential decoder,
   which check every report they render with it. */
#ifndef MGUARD_TESTS_JSON_CHECK_H
#define MGUARD_TESTS_JSON_CHECK_H

#include <string.h>

/* RFC 8259, strictly: one value, no trailing commas, no leading zeros, no
   raw control characters, only valid escapes and valid UTF-8. */
typedef struct jrd { const unsigned char *p; int depth; } jrd;

static void j_ws(jrd *r) { while (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r') r->p++; }
static int j_value(jrd *r);

static int j_hex(unsigned c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

static int j_string(jrd *r)
{
    if (*r->p != '"') return 0;
    r->p++;
    for (;;) {
        unsigned c = *r->p;
        if (c == '"') { r->p++; return 1; }
        if (c < 0x20) return 0;
        if (c == '\\') {
            r->p++;
            if (*r->p == 'u') {
                int i;
                for (i = 1; i <= 4; i++) if (!j_hex(r->p[i])) return 0;
                r->p += 5;
            } else if (*r->p && strchr("\"\\/bfnrt", *r->p)) {
                r->p++;
            } else {
                return 0;
            }
            continue;
        }
        if (c < 0x80) { r->p++; continue; }
        {
            int n = c >= 0xc2 && c <= 0xdf ? 1 : c >= 0xe0 && c <= 0xef ? 2 : c >= 0xf0 && c <= 0xf4 ? 3 : -1, i;
            if (n < 0) return 0;
            if (c == 0xe0 && r->p[1] < 0xa0) return 0;
            if (c == 0xed && r->p[1] > 0x9f) return 0;
            if (c == 0xf0 && r->p[1] < 0x90) return 0;
            if (c == 0xf4 && r->p[1] > 0x8f) return 0;
            for (i = 1; i <= n; i++) if ((r->p[i] & 0xc0) != 0x80) return 0;
            r->p += n + 1;
        }
    }
}

static int j_number(jrd *r)
{
    if (*r->p == '-') r->p++;
    if (*r->p == '0') r->p++;
    else if (*r->p >= '1' && *r->p <= '9') while (*r->p >= '0' && *r->p <= '9') r->p++;
    else return 0;
    if (*r->p == '.') {
        r->p++;
        if (!(*r->p >= '0' && *r->p <= '9')) return 0;
        while (*r->p >= '0' && *r->p <= '9') r->p++;
    }
    if (*r->p == 'e' || *r->p == 'E') {
        r->p++;
        if (*r->p == '+' || *r->p == '-') r->p++;
        if (!(*r->p >= '0' && *r->p <= '9')) return 0;
        while (*r->p >= '0' && *r->p <= '9') r->p++;
    }
    return 1;
}

static int j_lit(jrd *r, const char *w)
{
    size_t n = strlen(w);
    if (strncmp((const char *)r->p, w, n)) return 0;
    r->p += n;
    return 1;
}

static int j_value(jrd *r)
{
    if (++r->depth > 64) return 0;
    j_ws(r);
    if (*r->p == '{') {
        r->p++;
        j_ws(r);
        if (*r->p == '}') { r->p++; r->depth--; return 1; }
        for (;;) {
            j_ws(r);
            if (!j_string(r)) return 0;
            j_ws(r);
            if (*r->p++ != ':') return 0;
            if (!j_value(r)) return 0;
            j_ws(r);
            if (*r->p == ',') { r->p++; continue; }
            if (*r->p++ != '}') return 0;
            break;
        }
    } else if (*r->p == '[') {
        r->p++;
        j_ws(r);
        if (*r->p == ']') { r->p++; r->depth--; return 1; }
        for (;;) {
            if (!j_value(r)) return 0;
            j_ws(r);
            if (*r->p == ',') { r->p++; continue; }
            if (*r->p++ != ']') return 0;
            break;
        }
    } else if (*r->p == '"') {
        if (!j_string(r)) return 0;
    } else if (*r->p == 't') {
        if (!j_lit(r, "true")) return 0;
    } else if (*r->p == 'f') {
        if (!j_lit(r, "false")) return 0;
    } else if (*r->p == 'n') {
        if (!j_lit(r, "null")) return 0;
    } else if (!j_number(r)) {
        return 0;
    }
    r->depth--;
    return 1;
}

static int json_valid(const char *text)
{
    jrd r;
    r.p = (const unsigned char *)text;
    r.depth = 0;
    if (!j_value(&r)) return 0;
    j_ws(&r);
    return *r.p == '\0';
}

#endif
