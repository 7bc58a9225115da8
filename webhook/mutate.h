/*
 * webhook/mutate.h - what autosync-webhook answers to one admission.k8s.io
 * AdmissionReview, with no I/O: the body in, the response body and one log
 * line out. A pod (or the pod template of a batch/v1 Job, a kubeflow.org
 * PyTorchJob or MPIJob, a jobset.x-k8s.io JobSet) that opted in with the
 * label PREFIX/enabled: "true" gets a JSON Patch adding the init container
 * that runs `autosync init`, the volumes it writes into and reads from, the
 * mounts and the environment of the app containers; it is never denied.
 * docs/kubernetes.md has the injected objects.
 */
#ifndef AUTOSYNC_WEBHOOK_MUTATE_H
#define AUTOSYNC_WEBHOOK_MUTATE_H

#include <stddef.h>

#define ASWH_MAX_RESOURCES 8

struct aswh_config {
	char prefix[128];     /* annotation/label prefix, "autosync.dev" */
	char image[256];      /* the init container's image */
	char pull_policy[32]; /* "IfNotPresent" */
	char mount[128];      /* the shared volume's path, "/autosync" */
	char site_config[64]; /* the site config's ConfigMap, "autosync-site" */
	/* extended resources the init container requests like the app
	 * containers (the same devices): a name, or a prefix ending in '/' */
	char resources[ASWH_MAX_RESOURCES][64];
	unsigned nresources;
};

/* The documented defaults. */
void aswh_config_default(struct aswh_config *c);

enum aswh_decision {
	ASWH_MUTATED = 0, /* allowed, with a patch */
	ASWH_SKIPPED,	  /* allowed, nothing to do (not opted in, off, done) */
	ASWH_DECLINED,	  /* allowed, no patch, with a warning */
	ASWH_BAD_REQUEST, /* no AdmissionReview to answer: HTTP 400 */
};

/*
 * Answer 'body' (len bytes, not NUL-terminated). Returns the decision;
 * *response is the JSON body to send (NULL for ASWH_BAD_REQUEST: the HTTP
 * status says it), *log one JSON line without newline; both malloc'ed
 * (the caller frees), NULL when out of memory.
 */
int aswh_review(const struct aswh_config *c, const char *body, size_t len,
		char **response, char **log);

#endif
