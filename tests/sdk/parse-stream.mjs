// Posts a chat to the assistant and reads the answer with the AI SDK's own client code
// (DefaultChatTransport validates every chunk against the SDK's schema; readUIMessageStream
// builds the message). Prints the final message as JSON; exits 1 on any rejected chunk.
import { DefaultChatTransport, readUIMessageStream } from "ai";

const [url, token] = process.argv.slice(2);
const transport = new DefaultChatTransport({ api: url, headers: { Authorization: `Bearer ${token}` } });
const messages = [{ id: "m1", role: "user", parts: [{ type: "text", text: "How are we doing this week?" }] }];
try {
  const stream = await transport.sendMessages({ chatId: "c1", messages, trigger: "submit-message", messageId: undefined, abortSignal: undefined });
  let last;
  const errors = [];
  for await (const message of readUIMessageStream({ stream, onError: (e) => errors.push(String(e)) })) {
    last = message;
  }
  console.log(JSON.stringify({ message: last, errors }));
  process.exit(errors.length === 0 ? 0 : 1);
} catch (error) {
  console.log(JSON.stringify({ failure: String(error) }));
  process.exit(1);
}
