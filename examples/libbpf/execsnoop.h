/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef __EXECSNOOP_H
#define __EXECSNOOP_H

#define MAX_FILENAME_LEN 127

struct event {
	int pid;
	int old_pid;
	unsigned int uid;
	char comm[16];
	char filename[MAX_FILENAME_LEN + 1];
};

#endif
