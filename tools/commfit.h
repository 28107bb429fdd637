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
int cf_cmd_merge(int argc, char **argv);
/* The profile of a job that did not finish from its spool (to out, or
 * beside the spool), of the parts of job nonce (0: the spool's job); who
 * names the command in messages.  0, 1 (cannot write, or out is a later
 * complete profile), CF_EXIT_USAGE (nothing usable in the spool), -1 (no
 * part of job nonce: quiet). */
int cf_merge_spool(const char *who, const char *spool, unsigned long long nonce, const char *out, int keep);

#endif
