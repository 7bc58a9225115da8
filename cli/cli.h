/* cli.h - subcommands of the autosync command-line tool. Each returns the
 * process exit status: 0 success, 1 failure, 2 usage error. */
#ifndef AUTOSYNC_CLI_H
#define AUTOSYNC_CLI_H

int autosync_cmd_topo(int argc, char **argv);
int autosync_cmd_plan(int argc, char **argv);
int autosync_cmd_config(int argc, char **argv);
int autosync_cmd_feedback(int argc, char **argv);
int autosync_cmd_bench(int argc, char **argv);
int autosync_cmd_launch(int argc, char **argv);

#endif
