// Starts Amazon's DynamoDB Local listening on 127.0.0.1 only.
//
// DynamoDB Local (3.3.1) has no bind-address option: DynamoDBProxyServer builds
// `new org.eclipse.jetty.server.Server(port)`, whose one ServerConnector has no
// host and so binds every interface. This launcher builds the server with
// DynamoDB Local's own ServerRunner (same command-line options), sets the host
// of every connector to 127.0.0.1 before starting it, checks after start that
// each listening socket really is on a loopback address (else exits 3), and
// prints one line `dynamodb-local listening 127.0.0.1:<port>`. `-port 0` (which
// DynamoDB Local's own parser refuses) lets the kernel pick a free port, so
// there is no race for one.
//
// It exits when its standard input closes, so the server never outlives the
// process that started it, even one killed with SIGKILL.
//
// Run it in Java's single-file source mode (JDK 11+; no build step):
//   java -Djava.library.path=<DynamoDBLocal_lib> -cp <DynamoDBLocal.jar> \
//        DynamoDBLocalLoopback.java -inMemory -sharedDb -disableTelemetry -port 0
// Used by tests/js/support/dynamodb-local.mjs.

import java.lang.reflect.Field;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import software.amazon.dynamodb.services.local.main.ServerRunner;
import software.amazon.dynamodb.services.local.server.DynamoDBProxyServer;

public class DynamoDBLocalLoopback {
    static final String HOST = "127.0.0.1";

    public static void main(String[] args) throws Exception {
        Thread watchdog = new Thread(() -> {
            try {
                while (System.in.read() != -1) {
                    // Ignore input; only its end matters.
                }
            } catch (Exception ignored) {
                // A broken stdin means the parent is gone, too.
            }
            Runtime.getRuntime().halt(0);
        }, "stdin-watchdog");
        watchdog.setDaemon(true);
        watchdog.start();

        boolean anyPort = false;
        args = args.clone();
        for (int i = 0; i + 1 < args.length; i++) {
            if (args[i].equals("-port") && args[i + 1].equals("0")) {
                args[i + 1] = "8000"; // a placeholder the parser accepts; replaced below
                anyPort = true;
            }
        }

        DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(args);
        Field field = DynamoDBProxyServer.class.getDeclaredField("server");
        field.setAccessible(true);
        Server server = (Server) field.get(proxy);
        Connector[] connectors = server.getConnectors();
        if (connectors.length == 0) fail("DynamoDB Local has no connector");
        for (Connector connector : connectors) {
            if (!(connector instanceof ServerConnector)) {
                fail("unexpected connector " + connector.getClass().getName());
            }
            ((ServerConnector) connector).setHost(HOST);
            if (anyPort) ((ServerConnector) connector).setPort(0);
        }

        proxy.start(); // prints "Could not start server on port" and stops on failure
        if (!server.isStarted()) fail("DynamoDB Local did not start");

        int port = -1;
        for (Connector connector : server.getConnectors()) {
            ServerConnector serverConnector = (ServerConnector) connector;
            Object transport = serverConnector.getTransport();
            if (!(transport instanceof ServerSocketChannel)) fail("connector is not listening");
            InetSocketAddress bound = (InetSocketAddress) ((ServerSocketChannel) transport).getLocalAddress();
            if (!bound.getAddress().isLoopbackAddress()) {
                server.stop();
                System.err.println("dynamodb-local bound " + bound + ", not a loopback address");
                Runtime.getRuntime().halt(3);
            }
            port = serverConnector.getLocalPort();
        }
        System.out.println("dynamodb-local listening " + HOST + ":" + port);
        System.out.flush();
        proxy.join();
    }

    static void fail(String message) {
        System.err.println("dynamodb-local: " + message);
        Runtime.getRuntime().halt(2);
    }
}
