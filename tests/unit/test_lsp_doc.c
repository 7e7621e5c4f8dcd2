/* Hover docs as Markdown text (lsp_doc_markdown): issue 27's docstrings
 * shown as code, C comments' leaders shown as bullets, reST backticks
 * mis-paired. */
#include "lsp/lsp_int.h"
#include "test.h"

static void check_md(const char *doc, const char *want)
{
    StrBuf sb;
    sb_init(&sb);
    lsp_doc_markdown(doc, &sb);
    CHECK_STR(sb.buf ? sb.buf : "", want);
    sb_release(&sb);
}

static void test_python_docstring(void)
{
    /* kept indented, the lines after a blank one are a Markdown code block */
    check_md("Given the return value\n        the request.\n\n        Because this.\n"
             "            indented more\n        :internal:",
             "Given the return value\nthe request.\n\nBecause this.\n    indented more\n"
             ":internal:");
    check_md("One line.", "One line.");
}

static void test_comment_leaders(void)
{
    /* Lua's block comments: "** " on every line, one star left by the index */
    check_md("* Try to convert a value to a float.\n* by the macro 'tonumber'.",
             "Try to convert a value to a float.\nby the macro 'tonumber'.");
    check_md("** two stars\n**\n** more", "two stars\n\nmore");
    /* a list inside prose is Markdown the author meant */
    check_md("Options:\n* one\n* two", "Options:\n* one\n* two");
    check_md("**Bold** start\n**also** bold", "**Bold** start\n**also** bold");
}

static void test_rest_backticks(void)
{
    check_md("Use ``app.run()`` or ``flask run``.", "Use `app.run()` or `flask run`.");
    check_md("Single `x` stays; ``a `b` c`` is left as is.",
             "Single `x` stays; ``a `b` c`` is left as is.");
    check_md("an open `` pair", "an open `` pair");
}

int main(void)
{
    RUN(test_python_docstring);
    RUN(test_comment_leaders);
    RUN(test_rest_backticks);
    return test_summary();
}
