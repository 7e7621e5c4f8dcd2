/* pp_eval.c - the value of a preprocessor condition (`#if` expression,
 * as chunk_ts_pp.c writes it) given what is known of the macros it names:
 * integers, defined(), the C operators; a value that depends on an unknown
 * macro is unknown, except where the other side decides (`0 && x`). */
#include "pp_int.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

typedef struct Val {
    int known;
    int64_t v;
} Val;

typedef struct Ev {
    const char *p;
    const PpFacts *f;
    int bad; /* not an expression this reads: the whole is unknown */
} Ev;

static const Val UNKNOWN = {0, 0};

static Val known(int64_t v)
{
    return (Val){1, v};
}

static void ev__blank(Ev *e)
{
    while (*e->p == ' ' || *e->p == '\t')
        e->p++;
}

static int ev__ident(char c, int first)
{
    return c == '_' || isalpha((unsigned char)c) || (!first && isdigit((unsigned char)c));
}

/* An identifier at e->p into buf (cut at cap); its length, 0 when none. */
static size_t ev__name(Ev *e, char *buf, size_t cap)
{
    ev__blank(e);
    size_t n = 0;
    if (!ev__ident(*e->p, 1)) return 0;
    while (ev__ident(e->p[n], 0))
        n++;
    size_t k = n < cap - 1 ? n : cap - 1;
    memcpy(buf, e->p, k);
    buf[k] = '\0';
    e->p += n;
    return n;
}

static int ev__eat(Ev *e, const char *op)
{
    ev__blank(e);
    size_t n = strlen(op);
    if (strncmp(e->p, op, n)) return 0;
    e->p += n;
    return 1;
}

static Val ev__cond(Ev *e);

static const PpName *ev__fact(const Ev *e, const char *name, int in_defined)
{
    for (size_t i = 0; i < e->f->n; i++)
        if (e->f->names[i].in_defined == in_defined && !strcmp(e->f->names[i].name, name))
            return &e->f->names[i];
    return NULL;
}

static Val ev__number(Ev *e)
{
    char *end;
    int64_t v = (int64_t)strtoull(e->p, &end, 0);
    if (end == e->p) {
        e->bad = 1;
        return UNKNOWN;
    }
    e->p = end;
    while (*e->p == 'u' || *e->p == 'U' || *e->p == 'l' || *e->p == 'L')
        e->p++;
    return known(v);
}

static Val ev__primary(Ev *e)
{
    ev__blank(e);
    char c = *e->p;
    if (c == '(') {
        e->p++;
        Val v = ev__cond(e);
        if (!ev__eat(e, ")")) e->bad = 1;
        return v;
    }
    if (isdigit((unsigned char)c)) return ev__number(e);
    if (c == '\'') {
        e->p++;
        int64_t v = (unsigned char)*e->p;
        if (*e->p == '\\') v = -1; /* an escape: not worth reading */
        while (*e->p && *e->p != '\'')
            e->p++;
        if (*e->p) e->p++;
        return v < 0 ? UNKNOWN : known(v);
    }
    char name[128];
    if (!ev__name(e, name, sizeof name)) {
        e->bad = 1;
        return UNKNOWN;
    }
    if (!strcmp(name, "defined")) {
        int paren = ev__eat(e, "(");
        char m[128];
        if (!ev__name(e, m, sizeof m) || (paren && !ev__eat(e, ")"))) {
            e->bad = 1;
            return UNKNOWN;
        }
        const PpName *x = ev__fact(e, m, 1);
        IdxBuilt b = x ? x->defined : IDX_BUILT_UNKNOWN;
        return b == IDX_BUILT_UNKNOWN ? UNKNOWN : known(b == IDX_BUILT_YES);
    }
    ev__blank(e);
    if (*e->p == '(') { /* a function-like macro (__has_include, a version test) */
        int depth = 0;
        do {
            depth += *e->p == '(';
            depth -= *e->p == ')';
            e->p++;
        } while (*e->p && depth > 0);
        return UNKNOWN;
    }
    const PpName *x = ev__fact(e, name, 0);
    return x && x->known ? known(x->value) : UNKNOWN;
}

static Val ev__unary(Ev *e)
{
    ev__blank(e);
    char c = *e->p;
    if (c == '!' && e->p[1] != '=') {
        e->p++;
        Val v = ev__unary(e);
        return v.known ? known(!v.v) : v;
    }
    if (c == '~' || c == '-' || c == '+') {
        e->p++;
        Val v = ev__unary(e);
        if (!v.known) return v;
        return known(c == '~' ? ~v.v : c == '-' ? (int64_t)(0 - (uint64_t)v.v) : v.v);
    }
    return ev__primary(e);
}

/* Binary operators by precedence, lowest first (&& and || apart). */
static const char *const ev__levels[][5] = {
    {"|", NULL},
    {"^", NULL},
    {"&", NULL},
    {"==", "!=", NULL},
    {"<=", ">=", "<", ">", NULL},
    {"<<", ">>", NULL},
    {"+", "-", NULL},
    {"*", "/", "%", NULL},
};
enum { EV_LEVELS = sizeof ev__levels / sizeof ev__levels[0] };

static const char *ev__op_at(Ev *e, int level)
{
    ev__blank(e);
    for (const char *const *op = ev__levels[level]; *op; op++) {
        size_t n = strlen(*op);
        if (strncmp(e->p, *op, n)) continue;
        /* `&` is not `&&`, `|` not `||`, `<` not `<<` or `<=` */
        char next = e->p[n];
        if (n == 1 && (next == e->p[0] || (next == '=' && strchr("<>", e->p[0])))) continue;
        if (n == 1 && e->p[0] == '|' && next == '|') continue;
        return *op;
    }
    return NULL;
}

static Val ev__apply(const char *op, Val a, Val b)
{
    if (!a.known || !b.known) return UNKNOWN;
    int64_t x = a.v, y = b.v;
    switch (op[0]) {
    case '|':
        return known(x | y);
    case '^':
        return known(x ^ y);
    case '&':
        return known(x & y);
    case '=':
        return known(x == y);
    case '!':
        return known(x != y);
    case '+':
        return known((int64_t)((uint64_t)x + (uint64_t)y));
    case '-':
        return known((int64_t)((uint64_t)x - (uint64_t)y));
    case '*':
        return known((int64_t)((uint64_t)x * (uint64_t)y));
    case '/':
    case '%':
        if (y == 0 || (x == INT64_MIN && y == -1)) return UNKNOWN;
        return known(op[0] == '/' ? x / y : x % y);
    case '<':
        if (op[1] == '<') return y < 0 || y > 62 ? UNKNOWN : known((int64_t)((uint64_t)x << y));
        return known(op[1] == '=' ? x <= y : x < y);
    case '>':
        if (op[1] == '>') return y < 0 || y > 62 ? UNKNOWN : known(x >> y);
        return known(op[1] == '=' ? x >= y : x > y);
    }
    return UNKNOWN;
}

static Val ev__binary(Ev *e, int level)
{
    if (level >= EV_LEVELS) return ev__unary(e);
    Val a = ev__binary(e, level + 1);
    const char *op;
    while (!e->bad && (op = ev__op_at(e, level))) {
        e->p += strlen(op);
        a = ev__apply(op, a, ev__binary(e, level + 1));
    }
    return a;
}

static Val ev__and(Ev *e)
{
    Val a = ev__binary(e, 0);
    while (!e->bad && ev__eat(e, "&&")) {
        Val b = ev__binary(e, 0);
        if ((a.known && !a.v) || (b.known && !b.v))
            a = known(0);
        else
            a = a.known && b.known ? known(1) : UNKNOWN;
    }
    return a;
}

static Val ev__or(Ev *e)
{
    Val a = ev__and(e);
    while (!e->bad && ev__eat(e, "||")) {
        Val b = ev__and(e);
        if ((a.known && a.v) || (b.known && b.v))
            a = known(1);
        else
            a = a.known && b.known ? known(0) : UNKNOWN;
    }
    return a;
}

static Val ev__cond(Ev *e)
{
    Val c = ev__or(e);
    if (e->bad || !ev__eat(e, "?")) return c;
    Val a = ev__cond(e);
    if (!ev__eat(e, ":")) {
        e->bad = 1;
        return UNKNOWN;
    }
    Val b = ev__cond(e);
    if (c.known) return c.v ? a : b;
    return a.known && b.known && a.v == b.v ? a : UNKNOWN;
}

int idx_pp_eval(const char *expr, const PpFacts *f, int64_t *v)
{
    Ev e = {expr ? expr : "", f, 0};
    Val r = ev__cond(&e);
    ev__blank(&e);
    if (e.bad || *e.p || !r.known) return 0;
    *v = r.v;
    return 1;
}

void idx_pp_names_free(PpName *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i].name);
    free(v);
}

PpName *idx_pp_names(const char *expr, size_t *n_out)
{
    PpName *v = NULL;
    size_t n = 0, cap = 0;
    int after_defined = 0;
    for (const char *p = expr ? expr : ""; *p;) {
        if (*p == '\'') { /* a character: no names inside */
            for (p++; *p && *p != '\''; p++)
                ;
            if (*p) p++;
            continue;
        }
        if (isdigit((unsigned char)*p)) {
            while (ev__ident(*p, 0))
                p++;
            continue;
        }
        if (!ev__ident(*p, 1)) {
            if (*p != ' ' && *p != '(') after_defined = 0;
            p++;
            continue;
        }
        size_t len = 0;
        while (ev__ident(p[len], 0))
            len++;
        if (len == 7 && !strncmp(p, "defined", 7)) {
            after_defined = 1;
        } else {
            int have = 0;
            for (size_t i = 0; i < n && !have; i++)
                have = v[i].in_defined == after_defined && strlen(v[i].name) == len &&
                       !strncmp(v[i].name, p, len);
            if (!have) {
                ARRAY_GROW(v, n + 1, cap);
                v[n++] = (PpName){xstrndup(p, len), after_defined, IDX_BUILT_UNKNOWN, 0, 0};
            }
            after_defined = 0;
        }
        p += len;
    }
    *n_out = n;
    return v;
}
