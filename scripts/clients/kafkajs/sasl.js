// Checks SASL against an iggy-kafka gateway started with --sasl, as Iggy's root user iggy: with
// each of PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 (the SCRAM credentials, password iggy, set
// beforehand through AlterUserScramCredentials) it produces one record to partition 0 of topic
// TOPIC-MECHANISM and reads it back with a one-member group. Prints PASS/FAIL lines for
// scripts/clients-interop.sh; exits 1 when a check failed.
//
// Usage: node sasl.js BROKER TOPIC
'use strict'

process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1'
const { Kafka, logLevel } = require('kafkajs')

const [broker, topic] = process.argv.slice(2)
const label = 'kafkajs ' + require('kafkajs/package.json').version + ' SASL'
let failed = false

const sleep = ms => new Promise(resolve => setTimeout(resolve, ms))

async function roundTrip (mechanism) {
  const name = mechanism.toUpperCase()
  const t = `${topic}-${name}`
  const value = `v-${name}`
  const kafka = new Kafka({
    clientId: 'clients-interop-kafkajs-sasl',
    brokers: [broker],
    sasl: { mechanism, username: 'iggy', password: 'iggy' },
    logLevel: logLevel.NOTHING,
    retry: { initialRetryTime: 100, retries: 3 },
  })
  const producer = kafka.producer()
  const consumer = kafka.consumer({ groupId: `${t}-g`, maxWaitTimeInMs: 100 })
  const got = []
  try {
    await producer.connect()
    await producer.send({ topic: t, messages: [{ key: 'k', value, partition: 0 }] })
    await producer.disconnect()
    await consumer.connect()
    await consumer.subscribe({ topic: t, fromBeginning: true })
    await consumer.run({ eachMessage: async ({ message }) => { got.push(message) } })
    const deadline = Date.now() + 15000
    while (got.length === 0 && Date.now() < deadline) await sleep(20)
  } catch (e) {
    failed = true
    console.log(`FAIL  ${label}: ${name}: ${e}`)
    return
  } finally {
    await consumer.disconnect().catch(() => {})
    await producer.disconnect().catch(() => {})
  }
  if (got.length === 1 && got[0].offset === '0' && String(got[0].key) === 'k' && String(got[0].value) === value) {
    console.log(`PASS  ${label}: ${name}: produced and consumed k=${value}`)
  } else {
    failed = true
    console.log(`FAIL  ${label}: ${name}: consumed ${JSON.stringify(got.map(m => [m.offset, String(m.key), String(m.value)]))}, want offset 0 k=${value}`)
  }
}

;(async () => {
  for (const m of ['plain', 'scram-sha-256', 'scram-sha-512']) await roundTrip(m)
  process.exit(failed ? 1 : 0)
})()
