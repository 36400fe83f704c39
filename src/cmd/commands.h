/* commands.h — the entry point of the commands module (commands.c), which
 * main.c loads with dlopen(): every command, over libostree and the rest.
 * Nothing here names libostree, so main.c can include it. */
#pragma once

/* The module's file name: beside the program in a build tree, else in
 * the package's library directory. */
#define COMMANDS_MODULE "apt2ostree-commands.so"

/* The name main.c looks the entry point up by. */
#define COMMANDS_MAIN "apt2ostree_commands_main"

/* "apt2ostree [--repo DIR] COMMAND [ARGS]" run to the end: its exit status. */
typedef int (*CommandsMain) (int argc, char **argv);
int apt2ostree_commands_main (int argc, char **argv);
