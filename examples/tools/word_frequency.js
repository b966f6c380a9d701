const words = args.text.toLowerCase().match(/\b\w+\b/g) || [];
const freq = {};
for (const word of words) {
  freq[word] = (freq[word] || 0) + 1;
}
const sorted = Object.entries(freq)
  .sort((a, b) => b[1] - a[1])
  .slice(0, 20);
return { totalWords: words.length, uniqueWords: Object.keys(freq).length, top20: sorted };
