/*
 * text.h - small text helpers every layer shares (internal: not installed,
 * not exported): the one boolean dialect, "did you mean", and the one
 * quoting of untrusted text for messages and logs.
 */
#ifndef AUTOSYNC_TEXT_H
#define AUTOSYNC_TEXT_H

#include <stddef.h>

/* The boolean dialect of every autosync input (site config, plan and
 * model files, plugstack arguments, AUTOSYNC_* variables), case-blind:
 * 1 true yes on y -> 1; 0 false no off n -> 0; anything else (or NULL)
 * -> -1. */
int asi_parse_bool(const char *s);

/* The candidate closest to 'word' (edit distance, case-blind), when it is
 * close enough to be a likely typo (at most 1 edit for short words, a
 * third of the length for longer ones); else NULL. Borrowed from 'cands'. */
const char *asi_suggest(const char *word, const char *const *cands, size_t n);

/* Is 'name' one of the comma-separated 'list' (NULL: empty)? The one
 * reading of AUTOSYNC_INJECTED, the variables an earlier autosync set, so
 * that "did the user set it" has one answer everywhere. */
int asi_name_in_list(const char *list, const char *name);

/* 's' without the blanks (spaces, tabs) around it, in place; returns the
 * first kept character. */
char *asi_trim(char *s);

/* 'cands' as "a, b, c or d" in 'buf'; returns buf. */
char *asi_list(const char *const *cands, size_t n, char *buf, size_t len);

/*
 * Copy 'val' into 'buf' for a message, a log line or a terminal: C0 and C1
 * control characters, DEL, bytes that are not UTF-8, and the Unicode
 * format characters that reorder or hide text (bidi embeddings, overrides
 * and isolates, LRM/RLM/ALM, zero-width characters) become \xNN or \u{XXXX};
 * a long value is cut with "...". Always NUL-terminates. NULL becomes "".
 * Returns buf.
 */
char *asi_quote(const char *val, char *buf, size_t len);

/* 1 when the 'len' bytes at 's' are UTF-8 (no overlong forms, surrogates
 * or values past U+10FFFF; NUL bytes count as characters), else 0. */
int asi_utf8_valid(const char *s, size_t len);

#endif
