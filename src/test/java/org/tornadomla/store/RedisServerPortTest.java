package org.tornadomla.store;

import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.net.ServerSocket;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The test harness's cluster ports: redis-server refuses a cluster node above port 55535 (its bus listens on
 * port + 10000), which once failed CI: five tries with ports from bind(0) all failed, the last on 59851.
 */
class RedisServerPortTest {
    @Test
    void clusterPortsLeaveRoomForTheBusPort() throws Exception {
        for (int i = 0; i < 100; i++) {
            int p = RedisServer.freeClusterPort();
            assertTrue(p >= 20000 && p <= 55535, "port " + p);
            for (int q : new int[] {p, p + 10000}) {
                try (ServerSocket s = new ServerSocket()) {
                    s.bind(new InetSocketAddress("127.0.0.1", q));   // throws when taken
                }
            }
        }
    }
}
