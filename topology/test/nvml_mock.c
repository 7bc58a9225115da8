/* nvml_mock.c - a stand-in libnvidia-ml for the NVML reader's test: the
 * four GPUs of the JUWELS Booster fixture, NVLink 3, with
 * $NVML_MOCK = "switch" (12 links each to NVSwitches), "peer" (4 links
 * between GPUs 0-1 and 2-3, plus one to an IBM CPU port), "fail" (init
 * fails). Built as a module by make check only. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
	char busIdLegacy[16];
	unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
	char busId[32];
} nvml_pci;

static const char *const gpus[] = {"0000:03:00.0", "0000:44:00.0",
				   "0000:84:00.0", "0000:c4:00.0"};
static const unsigned buses[] = {0x03, 0x44, 0x84, 0xc4};

static const char *mode(void)
{
	const char *m = getenv("NVML_MOCK");

	return m ? m : "switch";
}

int nvmlInit_v2(void);
int nvmlShutdown(void);
int nvmlDeviceGetHandleByPciBusId_v2(const char *busid, void **dev);
int nvmlDeviceGetNvLinkState(void *dev, unsigned link, int *active);
int nvmlDeviceGetNvLinkVersion(void *dev, unsigned link, unsigned *v);
int nvmlDeviceGetNvLinkRemotePciInfo_v2(void *dev, unsigned link,
					nvml_pci *pci);
int nvmlDeviceGetUUID(void *dev, char *buf, unsigned len);
int nvmlDeviceGetName(void *dev, char *buf, unsigned len);

int nvmlInit_v2(void)
{
	return strcmp(mode(), "fail") ? 0 : 999;
}

int nvmlShutdown(void)
{
	return 0;
}

int nvmlDeviceGetHandleByPciBusId_v2(const char *busid, void **dev)
{
	for (int i = 0; i < 4; i++)
		if (!strcmp(busid, gpus[i])) {
			*dev = (void *)(intptr_t)(i + 1);
			return 0;
		}
	return 6; /* NVML_ERROR_NOT_FOUND */
}

int nvmlDeviceGetNvLinkState(void *dev, unsigned link, int *active)
{
	(void)dev;
	if (link >= 12)
		return 2; /* NVML_ERROR_INVALID_ARGUMENT: no such link */
	*active = strcmp(mode(), "peer") || link < 5; /* 1 = enabled */
	return 0;
}

int nvmlDeviceGetNvLinkVersion(void *dev, unsigned link, unsigned *v)
{
	(void)dev;
	(void)link;
	*v = 3;
	return 0;
}

int nvmlDeviceGetNvLinkRemotePciInfo_v2(void *dev, unsigned link, nvml_pci *pci)
{
	int i = (int)(intptr_t)dev - 1;

	memset(pci, 0, sizeof(*pci));
	if (!strcmp(mode(), "peer") && link < 4) {
		pci->bus = buses[i ^ 1];
		pci->pciDeviceId = 0x20b010de;
	} else if (!strcmp(mode(), "peer")) {
		pci->bus = 0x07;
		pci->pciDeviceId = 0x04ea1014; /* IBM */
	} else {
		pci->bus = 0xe0 + link % 6; /* six NVSwitches */
		pci->pciDeviceId = 0x1af110de;
	}
	snprintf(pci->busId, sizeof(pci->busId), "00000000:%02x:00.0",
		 pci->bus);
	return 0;
}

int nvmlDeviceGetUUID(void *dev, char *buf, unsigned len)
{
	snprintf(buf, len, "GPU-mock-%d", (int)(intptr_t)dev - 1);
	return 0;
}

int nvmlDeviceGetName(void *dev, char *buf, unsigned len)
{
	(void)dev;
	snprintf(buf, len, "NVIDIA A100-SXM4-40GB");
	return 0;
}
