/* remodel-memsrv --send PORT JSON: one command to the server on PORT
 * (admin database), its reply printed as relaxed Extended JSON; exit 1
 * when the reply is not ok. The matrices reset state between points
 * with it: a python client's start-up is most of a reset's time. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "mem.h"
#include "mem_wire.h"

static void
put32 (rm_buf_t *b, int32_t v)
{
    uint8_t p[4] = {(uint8_t) v, (uint8_t) (v >> 8), (uint8_t) (v >> 16), (uint8_t) (v >> 24)};
    rm_buf_append (b, p, 4);
}

int
mem_client_send (int port, const char *json)
{
    bson_error_t err;
    bson_t *cmd = bson_new_from_json ((const uint8_t *) json, -1, &err);
    struct sockaddr_in a = {.sin_family = AF_INET};
    rm_buf_t msg, in;
    bson_t reply;
    char *text;
    int fd, rc;
    if (!cmd) {
        fprintf (stderr, "remodel-memsrv: --send: %s\n", err.message);
        return 2;
    }
    BSON_APPEND_UTF8 (cmd, "$db", "admin");
    rm_buf_init (&msg);
    put32 (&msg, 0);
    put32 (&msg, 1);
    put32 (&msg, 0);
    put32 (&msg, 2013);
    put32 (&msg, 0);
    rm_buf_append (&msg, "", 1);
    rm_buf_append (&msg, bson_get_data (cmd), cmd->len);
    msg.data[0] = (uint8_t) msg.len;
    msg.data[1] = (uint8_t) (msg.len >> 8);
    msg.data[2] = (uint8_t) (msg.len >> 16);
    msg.data[3] = (uint8_t) (msg.len >> 24);
    a.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
    a.sin_port = htons ((uint16_t) port);
    fd = socket (AF_INET, SOCK_STREAM, 0);
    rm_buf_init (&in);
    if (fd < 0 || connect (fd, (struct sockaddr *) &a, sizeof a) ||
        write (fd, msg.data, msg.len) != (ssize_t) msg.len || !mem_wire_read (fd, &in) ||
        in.len < 21 || !bson_init_static (&reply, in.data + 21, in.len - 21)) {
        perror ("remodel-memsrv: --send");
        return 2;
    }
    text = bson_as_relaxed_extended_json (&reply, NULL);
    printf ("%s\n", text);
    rc = mem_int (&reply, "ok", 0) == 1 ? 0 : 1;
    bson_free (text);
    close (fd);
    rm_buf_destroy (&msg);
    rm_buf_destroy (&in);
    bson_destroy (cmd);
    return rc;
}
