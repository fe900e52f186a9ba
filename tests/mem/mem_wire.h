/* The wire protocol (mem_wire.c): one message read, one answered. */
#ifndef MEM_WIRE_H
#define MEM_WIRE_H

#include <stdbool.h>

#include "remodel/buf.h"

/* A whole message into msg: false at the end of the connection or on a
 * malformed length. */
bool mem_wire_read (int fd, rm_buf_t *msg);
/* Runs the message's command and writes the reply: false when the
 * message is not one the server reads (the connection is then closed). */
bool mem_wire_answer (int fd, const rm_buf_t *msg, int port);

/* mem_client.c: one command sent to the server on port (--send). */
int mem_client_send (int port, const char *json);

#endif
