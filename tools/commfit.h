/* Subcommands of the commfit command.  Each returns the exit status:
 * 0 success, 1 failure of the job it ran, 2 bad usage or bad input. */
#ifndef CF_TOOLS_COMMFIT_H
#define CF_TOOLS_COMMFIT_H

#define CF_EXIT_USAGE 2

int cf_cmd_run(int argc, char **argv);
int cf_cmd_model(int argc, char **argv);
int cf_cmd_report(int argc, char **argv);
int cf_cmd_trace(int argc, char **argv);
int cf_cmd_diff(int argc, char **argv);

#endif
