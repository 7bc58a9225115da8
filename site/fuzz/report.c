/* report.c - libFuzzer target for job reports (AUTOSYNC_REPORT, the
 * user's file, read as root). The buffer and the streaming reader agree,
 * and no value outside (0, 1e6] s is kept. Built by tests/fuzz/run.sh. */
#define _GNU_SOURCE
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "autosync/feedback.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	autosync_feedback_rec_t *a = calloc(1, sizeof(*a)),
				*b = calloc(1, sizeof(*b));
	autosync_error_t err;
	char *text = malloc(size + 1);
	int fd = memfd_create("report", MFD_CLOEXEC), na, nb, cut = 0;

	if (!a || !b || !text || fd < 0 ||
	    write(fd, data, size) != (ssize_t)size ||
	    lseek(fd, 0, SEEK_SET) != 0)
		abort();
	memcpy(text, data, size);
	text[size] = '\0';
	nb = autosync_feedback_read_report(fd, size + 1, b, &cut, &err);
	/* the buffer parser stops at a NUL; the stream calls it an error */
	if (!memchr(data, '\0', size)) {
		na = autosync_feedback_parse_report(text, a, &err);
		if (na != nb || a->measured_count != b->measured_count ||
		    a->nmeasured != b->nmeasured || cut)
			abort();
	}
	for (size_t i = 0; nb > 0 && i < b->nmeasured; i++)
		if (!(b->measured[i] > 0 && b->measured[i] <= 1e6))
			abort();
	free(text);
	free(a);
	free(b);
	close(fd);
	return 0;
}
