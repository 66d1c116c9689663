#include <stdio.h>
#include <editline/readline.h>

/* libedit's readline globals are mutable C variables, which Swift 6 will
 * not touch directly; these accessors are the only way the shell uses them. */
static inline void cedit_set_completer(char **(*fn)(const char *, int, int)) { rl_attempted_completion_function = fn; }
static inline const char *cedit_line_buffer(void) { return rl_line_buffer; }
static inline void cedit_completion_over(void) { rl_attempted_completion_over = 1; }
static inline void cedit_set_name(const char *name) { rl_readline_name = name; }
