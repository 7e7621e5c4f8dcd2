/* File URIs from clients -> local paths, and back. */
#include "lsp.h"
#include "test.h"

#include <stdlib.h>

static void test_uri_to_path(void)
{
    static const struct {
        const char *uri, *want; /* want NULL: refused */
    } cases[] = {
        {"file:///work/proj/a.py", "/work/proj/a.py"},
        {"file:///work/my%20proj/a%20b/c%231.py", "/work/my proj/a b/c#1.py"},
        {"file:///w/%C3%A9.py", "/w/\xC3\xA9.py"},
        {"file:///w/%c3%a9.py", "/w/\xC3\xA9.py"},
        {"FILE:///w/a.py", "/w/a.py"},
        {"file://localhost/w/a.py", "/w/a.py"},
        {"file:///w/a.py?query#frag", "/w/a.py"},
        {"file:///", "/"},
        {"file://host/w/a.py", NULL},
        {"file:w/a.py", NULL},
        {"http:///w/a.py", NULL},
        {"untitled:Untitled-1", NULL},
        {"file:///w/a%00.py", NULL},
        {"file:///w/a%2", NULL},
        {"file:///w/a%zz", NULL},
        {"", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *p = lsp_uri_to_path(cases[i].uri);
        if (cases[i].want)
            CHECK_STR(p, cases[i].want);
        else
            CHECK(p == NULL);
        free(p);
    }
    CHECK(lsp_uri_to_path(NULL) == NULL);
}

static void test_round_trip(void)
{
    static const char *const rels[] = {"a.py", "p q/r#s%t?.py", "\xC3\xA9t\xC3\xA9/x.py", "~u_v-w.py"};
    for (size_t i = 0; i < sizeof rels / sizeof rels[0]; i++) {
        char *uri = lsp_path_to_uri("/root dir", rels[i]);
        char *back = lsp_uri_to_path(uri);
        char want[256];
        snprintf(want, sizeof want, "/root dir/%s", rels[i]);
        CHECK_STR(back, want);
        free(uri);
        free(back);
    }
}

int main(void)
{
    RUN(test_uri_to_path);
    RUN(test_round_trip);
    return test_summary();
}
