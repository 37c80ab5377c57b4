export default function tiny(n) {
  return n + 1;
}
