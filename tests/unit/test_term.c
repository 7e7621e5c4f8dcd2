/* cli/term.c: Markdown for a terminal, whole or streamed in pieces. */
#include "cli/cli_int.h"
#include "test.h"

#include <stdlib.h>
#include <string.h>

#define FFFD "\xef\xbf\xbd" /* U+FFFD: a control character shown */

/* Renders md in pieces of `step` bytes (0: whole), wrapped at `width`
 * columns (0: not), and returns the output. */
static char *render_w(const char *md, size_t step, int styles, size_t width)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CliTerm *t = cli_term_new(f, styles, styles ? "/ws" : NULL);
    cli_term_wrap(t, width);
    size_t n = strlen(md);
    if (!step) step = n ? n : 1;
    for (size_t i = 0; i < n; i += step)
        cli_term_md(t, md + i, i + step > n ? n - i : step);
    cli_term_end(t);
    cli_term_free(t);
    fclose(f);
    return buf;
}

static char *render(const char *md, size_t step, int styles)
{
    return render_w(md, step, styles, 0);
}

static void expect_plain(const char *md, const char *want)
{
    /* the same text whatever the pieces it arrives in */
    for (size_t step = 0; step <= 7; step++) {
        char *got = render(md, step, 0);
        if (strcmp(got, want)) fprintf(stderr, "pieces of %zu:\n", step);
        CHECK_STR(got, want);
        free(got);
    }
}

static void test_plain_strips_syntax(void)
{
    static const struct {
        const char *md, *want;
    } cases[] = {
        {"**`shop/models.py`**\n- `apply_tax` [shop/models.py:39-41] — adds tax.\n",
         "shop/models.py\n- apply_tax shop/models.py:39-41 — adds tax.\n"},
        {"## Routing\nThe `Map` **binds** rules.", "Routing\nThe Map binds rules.\n"},
        {"a * b and 2*3, snake_case_name", "a * b and 2*3, snake_case_name\n"},
        {"escaped \\[not a citation\\] and \\*star\\*", "escaped [not a citation] and *star*\n"},
        {"[1] and [see note: 3] stay; [routergroup.go:41-60] is a citation",
         "[1] and [see note: 3] stay; routergroup.go:41-60 is a citation\n"},
        {"``a ` b`` code", "a ` b code\n"},
        {"see `` `x` `` here", "see `x` here\n"},
        {"text\n```python\ndef f():\n    return **kw\n```\nafter",
         "text\ndef f():\n    return **kw\nafter\n"},
        {"unclosed **bold\nnext line", "unclosed bold\nnext line\n"},
        {"#hashtag and # not heading mid-line", "#hashtag and # not heading mid-line\n"},
        {"trailing [x.py:3", "trailing [x.py:3\n"},
        {"  ## Indented heading\n   ```\ncode\n```", "Indented heading\ncode\n"},
        {"[a.py:3-4, 9; b/c.py:2] and [a.py:3, see] and [1, 2]",
         "a.py:3-4, 9; b/c.py:2 and [a.py:3, see] and [1, 2]\n"},
        {"a\x1b]52;c;eA==\x07"
         "b \x1b[2J\rc\xc2\x9b"
         "d\x7f",
         "a" FFFD "]52;c;eA==" FFFD "b " FFFD "[2J" FFFD "c" FFFD "d" FFFD "\n"},
        {"c\xc2\x9b"
         "d `\xc2\x9b` x\xc2\xa0y",
         "c" FFFD "d " FFFD " x\xc2\xa0y\n"}, /* C1, split or not */
        {"*Note:* a *few words* here; 2*3, a * b, * item, (*x*)",
         "Note: a few words here; 2*3, a * b, * item, (x)\n"},
        {"see [the map](pkg/routing.py#L40) and [docs](https://x.org/a), not [x] (y) nor [a](b c)",
         "see the map (pkg/routing.py#L40) and docs (https://x.org/a), not [x] (y) nor [a](b c)\n"},
        {"", ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        expect_plain(cases[i].md, cases[i].want);
}

static void test_styles(void)
{
    char *got = render("**b** `c` [a.py:3-4]", 0, 1);
    CHECK(strstr(got, "\x1b[1mb") != NULL);                      /* bold */
    CHECK(strstr(got, "\x1b[36mc") != NULL);                     /* code */
    CHECK(strstr(got, "\x1b]8;;file:///ws/a.py\x1b\\") != NULL); /* a link to the file */
    CHECK(strstr(got, "a.py:3-4") != NULL);
    free(got);
    got = render("*it* [m](b.py#L2) [w](https://x.org/\x1b)", 2, 1);
    CHECK(strstr(got, "\x1b[3mit") != NULL);                     /* italic */
    CHECK(strstr(got, "\x1b]8;;file:///ws/b.py\x1b\\") != NULL); /* a link to the file */
    CHECK(strstr(got, "x.org/\x1b") == NULL); /* a target with an escape: no link, shown inert */
    free(got);
    got = render("[a.py:3, 9; b.py:2]", 3, 1); /* each part linked to its file */
    CHECK(strstr(got, "\x1b]8;;file:///ws/a.py\x1b\\") != NULL);
    CHECK(strstr(got, "\x1b]8;;file:///ws/b.py\x1b\\") != NULL);
    for (const char *b = strchr(got, '['); b; b = strchr(b + 1, '['))
        CHECK(b > got && b[-1] == '\x1b');                        /* no bracket but escapes' */
    CHECK(strstr(got, "**") == NULL && strchr(got, '`') == NULL); /* no syntax */
    const char *reset = strstr(got, "\x1b[0m"), *r;
    while (reset && (r = strstr(reset + 1, "\x1b[0m")))
        reset = r;
    CHECK(reset && !strstr(reset + 1, "\x1b[")); /* styles reset at the end */
    free(got);
}

static void test_styles_wanted(void)
{
    CHECK_INT(cli_term_styles_wanted(1, NULL, "xterm-256color"), 1);
    CHECK_INT(cli_term_styles_wanted(1, "", "xterm"), 1);
    CHECK_INT(cli_term_styles_wanted(1, "1", "xterm"), 0);
    CHECK_INT(cli_term_styles_wanted(1, NULL, "dumb"), 0);
    CHECK_INT(cli_term_styles_wanted(0, NULL, "xterm"), 0);
}

static void test_location(void)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CliTerm *t = cli_term_new(f, 0, "/ws");
    cli_term_heading(t, "Citations");
    cli_term_location(t, "pkg/a.py", "../pkg/a.py", 12, "Map.bind", 0);
    cli_term_location(t, "b.py", "b.py", 3, "f", 9);
    cli_term_item(t, "[x.py:90]", "out_of_range");
    cli_term_location(t, "e\x1b[1m.py", "e\x1b[1m.py", 1, NULL, 20);
    cli_term_free(t);
    fclose(f);
    CHECK_STR(buf,
              "Citations\n  ../pkg/a.py:12  Map.bind\n  b.py:3     f\n  [x.py:90]  (out_of_range)\n"
              "  e" FFFD "[1m.py:1\n");
    free(buf);
}

/* The text without blanks: the same words, however wrapped. */
static char *squeeze(const char *s)
{
    char *o = xstrdup(s), *w = o;
    for (; *s; s++)
        if (*s != ' ' && *s != '\n') *w++ = *s;
    *w = '\0';
    return o;
}

static void test_wrap(void)
{
    static const struct {
        const char *md;
        size_t width;
        const char *want;
    } cases[] = {
        /* at word boundaries, markup not counted */
        {"The best match is `permission_denied`: the 403 handler. It calls `get_template` and "
         "`HttpResponseForbidden`.\n",
         40,
         "The best match is permission_denied: the\n403 handler. It calls get_template and\n"
         "HttpResponseForbidden.\n"},
        /* a list item's further rows under its text; a numbered header too */
        {"- `apply_tax` [shop/models.py:39-41] — adds the tax to a price\n**2. `f`** [a.py:1] "
         "— one two three four\n",
         30,
         "- apply_tax\n  shop/models.py:39-41 — adds\n  the tax to a price\n2. f a.py:1 — one two "
         "three\n   four\n"},
        /* code blocks as they are; a word longer than the width whole */
        {"```\n  12 │ return some_function(argument_one, argument_two)\n```\nx "
         "a_very_long_identifier_name y\n",
         20,
         "  12 │ return some_function(argument_one, "
         "argument_two)\nx\na_very_long_identifier_name\ny\n"},
        /* exactly the width fits; a line's indent kept on its further rows */
        {"abcd efgh ij\n  kl mn op qr\n", 9, "abcd efgh\nij\n  kl mn\n  op qr\n"},
        /* no width: never */
        {"one two three four five six", 0, "one two three four five six\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *got = render_w(cases[i].md, 0, 0, cases[i].width);
        CHECK_STR(got, cases[i].want);
        free(got);
        /* streamed in pieces: every piece shown as it comes (a word cut by a
         * piece's end may pass the edge), the same text */
        for (size_t step = 1; step <= 7; step++) {
            char *g = render_w(cases[i].md, step, 0, cases[i].width);
            char *a = squeeze(g), *b = squeeze(cases[i].want);
            CHECK_STR(a, b);
            free(a);
            free(b);
            free(g);
        }
    }
    /* styles: escapes take no column, and the link stays around its word */
    char *got = render_w("word `code` [a.py:3-4] end", 0, 1, 12);
    CHECK(strstr(got, "word \x1b[0m\x1b[36mcode") != NULL);
    CHECK(strstr(got, "\n\x1b]8;;file:///ws/a.py") != NULL ||
          strstr(got, "\x1b]8;;file:///ws/a.py") != NULL);
    char *plain = render_w("word `code` [a.py:3-4] end", 0, 0, 12);
    CHECK_STR(plain, "word code\na.py:3-4 end\n");
    free(plain);
    free(got);
}

int main(void)
{
    RUN(test_plain_strips_syntax);
    RUN(test_styles);
    RUN(test_styles_wanted);
    RUN(test_location);
    RUN(test_wrap);
    return test_summary();
}
