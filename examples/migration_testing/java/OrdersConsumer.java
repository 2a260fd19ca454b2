/*
 * The orders service's consumer as a Java team writes it, on kafka-clients alone: auto-commit off, offsets committed
 * synchronously after processing (every COMMIT_EVERY records, and for the partitions given up in
 * onPartitionsRevoked), and its own rebalance listener.
 *
 * Run by zkconsumer's migration comparison as every member of the modern protocols (docs: "Writing a member in
 * another language"): it is told what to join through ZKCONSUMER_* environment variables and reports on stdout in
 * the JSON lines of Kafka's verifiable consumer (org.apache.kafka.tools.VerifiableConsumer). It leaves the group
 * cleanly on SIGTERM or when its stdin closes.
 *
 *   CP="$KAFKA_CLIENTS_CLASSPATH"   # your build's; or zkconsumer's own Kafka 4 jars: '<checkout>/.kafka/kafka-4/*'
 *   javac -cp "$CP" -d build java/OrdersConsumer.java
 *   zkconsumer migration compare --member-command "java -cp build:$CP OrdersConsumer" ...
 *
 * The example's tests compile and run it through the java_consumer fixture (tests/conftest.py).
 */

import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.RangeAssignor;
import org.apache.kafka.clients.consumer.RoundRobinAssignor;
import org.apache.kafka.clients.consumer.StickyAssignor;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.StringDeserializer;

import java.io.FileWriter;
import java.io.IOException;
import java.io.InputStream;
import java.io.Writer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;

public class OrdersConsumer implements ConsumerRebalanceListener {
    static final int COMMIT_EVERY = 20;
    /* partition.assignment.strategy takes class names in the Java client (librdkafka takes these names) */
    static final Map<String, String> ASSIGNORS = Map.of(
        "range", RangeAssignor.class.getName(),
        "roundrobin", RoundRobinAssignor.class.getName(),
        "sticky", StickyAssignor.class.getName(),
        "cooperative-sticky", CooperativeStickyAssignor.class.getName());

    private final KafkaConsumer<String, String> consumer;
    private final Map<TopicPartition, OffsetAndMetadata> processed = new HashMap<>();
    private final Writer state;
    private int sinceCommit;

    OrdersConsumer(Properties settings, Writer state) {
        this.consumer = new KafkaConsumer<>(settings, new StringDeserializer(), new StringDeserializer());
        this.state = state;
    }

    static Properties settings() {
        Map<String, String> env = System.getenv();
        Properties p = new Properties();
        p.put("bootstrap.servers", env.get("ZKCONSUMER_BOOTSTRAP_SERVERS"));
        p.put("group.id", env.get("ZKCONSUMER_GROUP_ID"));
        p.put("client.id", env.get("ZKCONSUMER_CLIENT_ID"));
        p.put("enable.auto.commit", "false");
        p.put("auto.offset.reset", "earliest");
        if ("consumer".equals(env.get("ZKCONSUMER_GROUP_PROTOCOL"))) {  // KIP-848: the session is the coordinator's
            p.put("group.protocol", "consumer");
            p.put("group.remote.assignor", env.get("ZKCONSUMER_ASSIGNOR"));
        } else {
            String assignor = env.get("ZKCONSUMER_ASSIGNOR");
            p.put("partition.assignment.strategy", ASSIGNORS.getOrDefault(assignor, assignor));
            p.put("session.timeout.ms", env.get("ZKCONSUMER_SESSION_TIMEOUT_MS"));
            p.put("heartbeat.interval.ms", env.get("ZKCONSUMER_HEARTBEAT_INTERVAL_MS"));
        }
        String instance = env.get("ZKCONSUMER_GROUP_INSTANCE_ID");
        if (instance != null && !instance.isEmpty())
            p.put("group.instance.id", instance);
        return p;
    }

    /* --- the reports: one JSON object a line, as the verifiable consumer prints them --- */

    static synchronized void report(String name, String fields) {
        System.out.println("{\"timestamp\":" + System.currentTimeMillis() + ",\"name\":\"" + name + "\""
            + (fields.isEmpty() ? "" : "," + fields) + "}");
        System.out.flush();
    }

    static String text(String s) {
        if (s == null)
            return "null";
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\')
                b.append('\\').append(c);
            else if (c < 0x20)
                b.append(String.format("\\u%04x", (int) c));
            else
                b.append(c);
        }
        return b.append('"').toString();
    }

    static String partitions(Collection<TopicPartition> partitions) {
        List<String> items = new ArrayList<>();
        for (TopicPartition tp : partitions)
            items.add("{\"topic\":" + text(tp.topic()) + ",\"partition\":" + tp.partition() + "}");
        return "\"partitions\":[" + String.join(",", items) + "]";
    }

    /* --- the service's own work --- */

    void process(ConsumerRecord<String, String> record) throws IOException {
        if (state != null) {
            state.write(record.key() + " " + record.value() + "\n");
            state.flush();
        }
        report("record_data", "\"topic\":" + text(record.topic()) + ",\"partition\":" + record.partition()
            + ",\"offset\":" + record.offset() + ",\"key\":" + text(record.key()) + ",\"value\":" + text(record.value()));
        processed.put(new TopicPartition(record.topic(), record.partition()), new OffsetAndMetadata(record.offset() + 1));
    }

    /** Commit what was processed (of {@code only}, when not null), synchronously. */
    void commit(Collection<TopicPartition> only) {
        Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>(processed);
        if (only != null)
            offsets.keySet().retainAll(only);
        if (offsets.isEmpty())
            return;
        List<String> items = new ArrayList<>();
        offsets.forEach((tp, o) -> items.add("{\"topic\":" + text(tp.topic()) + ",\"partition\":" + tp.partition()
            + ",\"offset\":" + o.offset() + "}"));
        String committed = "\"offsets\":[" + String.join(",", items) + "]";
        try {
            consumer.commitSync(offsets);
        } catch (KafkaException e) {
            report("offsets_committed", committed + ",\"success\":false,\"error\":" + text(e.toString()));
            return;
        }
        report("offsets_committed", committed + ",\"success\":true");
        processed.keySet().removeAll(offsets.keySet());
        sinceCommit = 0;
    }

    @Override
    public void onPartitionsAssigned(Collection<TopicPartition> assigned) {
        report("partitions_assigned", partitions(assigned));
    }

    @Override
    public void onPartitionsRevoked(Collection<TopicPartition> revoked) {
        commit(revoked);  // their next owner starts where this one stopped
        report("partitions_revoked", partitions(revoked));
    }

    @Override
    public void onPartitionsLost(Collection<TopicPartition> lost) {
        processed.keySet().removeAll(lost);  // someone else may own them already: nothing to commit
        report("partitions_lost", partitions(lost));
    }

    void run() throws IOException {
        report("startup_complete", "");
        consumer.subscribe(List.of(System.getenv("ZKCONSUMER_TOPIC")), this);
        try {
            while (true) {
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(100))) {
                    process(record);
                    if (++sinceCommit >= COMMIT_EVERY)
                        commit(null);
                }
            }
        } catch (WakeupException stopping) {
            commit(null);
        } finally {
            consumer.close();  // the listener's revocation runs, and the member leaves the group
            report("shutdown_complete", "");
        }
    }

    public static void main(String[] args) throws Exception {
        String dir = System.getenv("ZKCONSUMER_STATE_DIR");
        Writer state = dir == null ? null
            : new FileWriter(Path.of(dir, "processed-" + ProcessHandle.current().pid() + ".txt").toFile(), true);
        OrdersConsumer orders = new OrdersConsumer(settings(), state);
        CountDownLatch done = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {  // SIGTERM: leave cleanly
            orders.consumer.wakeup();
            try {
                done.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }));
        Thread stdin = new Thread(() -> {  // stdin closed: the process that started this one is gone
            try (InputStream in = System.in) {
                while (in.read() != -1) { }
            } catch (IOException e) {
                // closed either way
            }
            orders.consumer.wakeup();
        });
        stdin.setDaemon(true);
        stdin.start();
        try {
            orders.run();
        } finally {
            done.countDown();
        }
    }
}
