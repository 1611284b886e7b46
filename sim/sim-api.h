/* sim-api.h — sim as a library, for programs and other languages.
 *
 * Load a cluster and a model once (a session), then evaluate as many plans
 * as you like: each answer is the JSON document the command line writes
 * for the same inputs, byte for byte (`sim --json -` and `sim compare
 * --json -`; their schemas are docs/schema/sim-result-1.schema.json and
 * sim-runs-2.schema.json).  Plain C with no GLib types, so that ctypes or
 * cffi bind it as it is (python/ does).  Link with `pkg-config --libs
 * sim`; only the functions below are exported from libsim.
 *
 * Ownership: every char * a function returns is the caller's, to free with
 * sim_api_free.
 * Errors: a function that fails returns NULL and, where error is not NULL,
 * sets *error to one line, the message the command line prints for the same
 * input (free it with sim_api_free).
 * Threads: a session is read-only once made: any number of threads may
 * evaluate plans on one session at once; free it once none does.
 */
#ifndef SIM_API_H
#define SIM_API_H

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) && defined(SIM_API_BUILD)
#define SIM_API __attribute__ ((visibility ("default")))
#else
#define SIM_API
#endif

/* the version of this interface; a change that breaks a caller changes it */
#define SIM_API_VERSION 1

typedef struct SimApiSession SimApiSession;

/* SIM_API_VERSION of the library loaded (a binding checks it against its own) */
SIM_API int sim_api_version (void);

/* A cluster and a model, as sim's --topology, --model, --nodes and --gpus
 * take them: topology a cluster file's path or a name in topologies/ (sim
 * list topologies); model a model file's path, a name in models/ or a
 * Hugging Face config.json (NULL: llama3-70b, sim's default); nodes 0: the
 * file's node count; gpus 0: whole nodes.  Returns a new session
 * (sim_api_session_free), or NULL with *error. */
SIM_API SimApiSession *sim_api_session_new (const char *topology, const char *model, int nodes,
                                            int gpus, char **error);
SIM_API void sim_api_session_free (SimApiSession *session);

/* One plan, as `sim --topology ... --json -` with the session's cluster
 * and model: plan is a plan string, the keys of sim's plan flags with their
 * values, "tp=8,pp=4,dp=2,micro-batch=2,recompute=full" (sim compare
 * --plan's form; "" for every default).  A plan that does not fit is an
 * answer, not an error (its memory.fits is false); on up to 256 GPUs its
 * memory.fastest_fit is searched as sim does.  Returns the sim-result/1
 * JSON text, or NULL with *error for a plan that is not one. */
SIM_API char *sim_api_estimate (SimApiSession *session, const char *plan, char **error);

/* n plans side by side, as `sim compare --plan P1 --plan P2 ... --json -`:
 * the sim-runs/2 JSON text, ranked, or NULL with *error */
SIM_API char *sim_api_compare (SimApiSession *session, const char *const *plans, int n,
                               char **error);

/* The session's layouts ranked, as `sim sweep --json -` on its cluster
 * and model: options are sim sweep's, as "key=value" items joined by
 * commas, lists joined by "/": top=K (default 10), all=true,
 * global-batch=B, seq-len=N, gpu-variation=S, fp8=off|hybrid|e4m3|both,
 * fp4=off|e2m1|both, tp=1/2/4, pp=..., cp=..., ep=..., etp=...,
 * min-headroom=10%, moe-imbalance=R, moe-expert-capacity-factor=C,
 * moe-pad-expert-input-to-capacity=true ("" for none).  Returns the sim-sweep/3 JSON text (the
 * whole sweep's rows in the table's order), or NULL with *error. */
SIM_API char *sim_api_sweep (SimApiSession *session, const char *options, char **error);

/* free what the functions above return; NULL is ignored */
SIM_API void sim_api_free (void *p);

#ifdef __cplusplus
}
#endif

#endif /* SIM_API_H */
