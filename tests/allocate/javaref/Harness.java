// Runs apache/rocketmq's own allocation strategy classes over cases read from stdin and prints
// each consumer's share: the ground truth for mqctl's tests/allocate/data/java_vectors.json.
// Input (one case):
//   CASE <id>
//   STRATEGY <avg|circle|hash N|room r1,r2|nearby INNER N BROKER_REGEX CONSUMER_REGEX>
//   CIDS <cid>\t<cid>...
//   MQ <topic>\t<broker>\t<queueId>        (repeated)
//   END
// Output: CASE <id>, then "C <cid>\t<i> <i> ..." (indices into the sorted mqAll) per distinct
// consumer in sorted order, or "ERR <exception message>", then END.
import java.io.*;
import java.util.*;
import java.util.regex.*;
import org.apache.rocketmq.client.consumer.AllocateMessageQueueStrategy;
import org.apache.rocketmq.client.consumer.rebalance.*;
import org.apache.rocketmq.common.message.MessageQueue;

public class Harness {
    static String room(Pattern p, String s) {
        Matcher m = p.matcher(s);
        if (!m.lookingAt()) return null;
        return m.group(1);
    }

    static AllocateMessageQueueStrategy simple(String name, int n) {
        switch (name) {
            case "avg": return new AllocateMessageQueueAveragely();
            case "circle": return new AllocateMessageQueueAveragelyByCircle();
            case "hash": return new AllocateMessageQueueConsistentHash(n);
            default: throw new IllegalStateException(name);
        }
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, "UTF-8"));
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), false, "UTF-8");
        String line, id = null;
        String[] strat = null;
        List<String> cids = new ArrayList<>();
        List<MessageQueue> mqs = new ArrayList<>();
        while ((line = in.readLine()) != null) {
            if (line.startsWith("CASE ")) {
                id = line.substring(5); cids = new ArrayList<>(); mqs = new ArrayList<>();
            } else if (line.startsWith("STRATEGY ")) {
                strat = line.substring(9).split(" ");
            } else if (line.startsWith("CIDS")) {
                String rest = line.length() > 5 ? line.substring(5) : "";
                if (!rest.isEmpty()) cids.addAll(Arrays.asList(rest.split("\t", -1)));
            } else if (line.startsWith("MQ ")) {
                String[] p = line.substring(3).split("\t", -1);
                mqs.add(new MessageQueue(p[0], p[1], Integer.parseInt(p[2])));
            } else if (line.equals("END")) {
                out.println("CASE " + id);
                // RebalanceImpl.rebalanceByTopic sorts both lists before allocating
                List<MessageQueue> mqAll = new ArrayList<>(mqs);
                Collections.sort(mqAll);
                List<String> cidAll = new ArrayList<>(cids);
                Collections.sort(cidAll);
                try {
                    AllocateMessageQueueStrategy s;
                    final String[] st = strat;
                    switch (st[0]) {
                        case "room": {
                            AllocateMessageQueueByMachineRoom r = new AllocateMessageQueueByMachineRoom();
                            r.setConsumeridcs(new HashSet<>(Arrays.asList(st[1].split(","))));
                            s = r;
                            break;
                        }
                        case "nearby": {
                            final Pattern bp = Pattern.compile(st[3]);
                            final Pattern cp = Pattern.compile(st[4]);
                            s = new AllocateMachineRoomNearby(simple(st[1], Integer.parseInt(st[2])),
                                new AllocateMachineRoomNearby.MachineRoomResolver() {
                                    public String brokerDeployIn(MessageQueue mq) { return room(bp, mq.getBrokerName()); }
                                    public String consumerDeployIn(String cid) { return room(cp, cid); }
                                });
                            break;
                        }
                        default:
                            s = simple(st[0], st.length > 1 ? Integer.parseInt(st[1]) : 10);
                    }
                    List<String> lines = new ArrayList<>();
                    for (String cid : new TreeSet<>(cidAll)) {
                        List<MessageQueue> got = s.allocate("G", cid, mqAll, cidAll);
                        StringBuilder sb = new StringBuilder("C " + cid + "\t");
                        boolean first = true;
                        for (MessageQueue mq : got) {
                            if (!first) sb.append(' ');
                            sb.append(mqAll.indexOf(mq));
                            first = false;
                        }
                        lines.add(sb.toString());
                    }
                    for (String l : lines) out.println(l);
                } catch (Exception e) {
                    out.println("ERR " + e.getClass().getSimpleName() + ": " + e.getMessage());
                }
                out.println("END");
            }
        }
        out.flush();
    }
}
