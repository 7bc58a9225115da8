/* cluster_spec.c - libFuzzer target for the compact cluster description
 * and the unit parsers. Built by tests/fuzz/run.sh with clang
 * -fsanitize=fuzzer,address,undefined (not by make). */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "autosync/cluster.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	autosync_error_t err;
	autosync_cluster_t c, d;
	char *s, out[1024];
	double v;

	if (size > 8192)
		return 0;
	if (!(s = malloc(size + 1)))
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	(void)autosync_parse_bandwidth(s, &v, &err);
	(void)autosync_parse_duration(s, &v, &err);
	(void)autosync_link_class_from_name(s);
	(void)autosync_transport_from_name(s);
	if (autosync_cluster_parse(&c, s, &err) == 0) {
		/* whatever parses must format and parse back to the same values
		 */
		int n = autosync_cluster_format(&c, out, sizeof(out));

		if (n < 0 || (size_t)n >= sizeof(out))
			abort();
		if (autosync_cluster_parse(&d, out, &err) != 0)
			abort();
		if (c.nodes != d.nodes || c.gpus_per_node != d.gpus_per_node ||
		    c.intra_class != d.intra_class ||
		    c.intra_bw != d.intra_bw || c.intra_lat != d.intra_lat ||
		    c.nics_per_node != d.nics_per_node ||
		    c.nic_bw != d.nic_bw || c.inter_lat != d.inter_lat ||
		    c.nodes_per_switch != d.nodes_per_switch ||
		    strcmp(c.topo_hash, d.topo_hash) != 0 ||
		    c.transport != d.transport)
			abort();
	}
	free(s);
	return 0;
}
