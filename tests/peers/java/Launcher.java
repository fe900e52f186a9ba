// Starts mongo-java-server (in-memory backend) on 127.0.0.1, on the port
// given (0: one the kernel picks), and says where in the same words as
// FerretDB's log, so tests/peers/server.sh finds the port the same way.
// Runs until SIGTERM or SIGINT. With --oplog it keeps an oplog (change
// streams).
import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import java.net.InetSocketAddress;
import java.util.concurrent.CountDownLatch;

public final class Launcher {
    public static void main(String[] args) throws Exception {
        int port = 0;
        boolean oplog = false;
        for (String a : args) {
            if (a.equals("--oplog")) oplog = true;
            else port = Integer.parseInt(a);
        }
        MongoServer server = new MongoServer(new MemoryBackend());
        if (oplog) server.enableOplog();
        server.bind("127.0.0.1", port);
        InetSocketAddress at = server.getLocalAddress();
        CountDownLatch done = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            server.shutdownNow();
            done.countDown();
        }));
        System.out.println("Listening on TCP 127.0.0.1:" + at.getPort());
        System.out.flush();
        done.await();
    }
}
